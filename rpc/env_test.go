package rpc_test

import (
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/rpc/rpctest"
	"github.com/vtcode/vtcode-ls/session"
)

func TestEnvBasics(t *testing.T) {
	rpctest.Run(t, rpctest.Options{}, func(t *testing.T, env *rpctest.Env) {
		s := env.OpenSession(session.OpenParams{SessionID: "s1"})
		env.Append(s.SessionID, history.NewText(history.User, "hello"))
		env.Await(rpctest.PressureState("s1", "ok"))
		st := env.Stats("s1")
		if st.Messages != 1 {
			t.Errorf("messages = %d, want 1", st.Messages)
		}
	})
}
