package proxy

import (
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/vtcode/vtcode-ls/session"
)

// TestSummarizerOnlyWithCredentials: the served request's model client
// exists only under [proxy] summarizer = "agent", for a request that
// carries a credential, on an endpoint with a summary request; the shared
// secret and the body's headers are not carried.
func TestSummarizerOnlyWithCredentials(t *testing.T) {
	target, _ := neturl.Parse("http://127.0.0.1:9/v1/messages?beta=true")
	for _, c := range []struct {
		name, toml string
		header     http.Header
		ep         endpoint
		model      string
		want       bool
	}{
		{"agent with a key", "[proxy]\nsummarizer = \"agent\"\n", http.Header{"X-Api-Key": {"sk-ant-one"}}, messages, "claude-test", true},
		{"agent with a bearer token", "[proxy]\nsummarizer = \"agent\"\n", http.Header{"Authorization": {"Bearer tok-123456"}}, messages, "claude-test", true},
		{"agent without credentials", "[proxy]\nsummarizer = \"agent\"\n", http.Header{"Anthropic-Version": {"2023-06-01"}, SecretHeader: {"shared-secret"}}, messages, "claude-test", false},
		{"agent without a model", "[proxy]\nsummarizer = \"agent\"\n", http.Header{"X-Api-Key": {"sk-ant-one"}}, messages, "", false},
		{"agent on count_tokens", "[proxy]\nsummarizer = \"agent\"\n", http.Header{"X-Api-Key": {"sk-ant-one"}}, countTokens, "claude-test", false},
		{"offline (the default)", "", http.Header{"X-Api-Key": {"sk-ant-one"}}, messages, "claude-test", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			user := filepath.Join(t.TempDir(), "vtcode.toml")
			if err := os.WriteFile(user, []byte(c.toml), 0o600); err != nil {
				t.Fatal(err)
			}
			mgr := session.NewManager(session.Options{NoWatch: true, UserConfig: user})
			defer mgr.Close()
			if err := mgr.AddWorkspace(t.TempDir(), nil); err != nil {
				t.Fatal(err)
			}
			s := New(Options{Manager: mgr})
			r := &http.Request{Header: c.header}
			g := s.summarizerFor(r, target, "anthropic", c.ep, c.model)
			if (g != nil) != c.want {
				t.Fatalf("summarizer %v, want %v", g != nil, c.want)
			}
		})
	}
}
