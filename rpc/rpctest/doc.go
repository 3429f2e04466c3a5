// Package rpctest drives a vtcode-ls server the way an editor does, for
// tests. It has two tools.
//
// # The fake editor
//
// [Run] starts [rpc.Serve] on an in-memory pipe, with a session manager on a
// temporary workspace folder, connects a fake editor to it, initializes the
// connection, and hands the test an [Env]. Env methods speak the protocol and
// call t.Fatal themselves, so a test reads as a script:
//
//	rpctest.Run(t, rpctest.Options{WorkDoneProgress: true}, func(t *testing.T, env *rpctest.Env) {
//		s := env.OpenSession(session.OpenParams{SessionID: "s1"})
//		env.Append(s.SessionID, history.NewText(history.User, "hello"))
//		env.Await(rpctest.PressureState("s1", "ok"))
//	})
//
// The editor records every notification the server sends ($/progress,
// vtcode/tokenPressure, vtcode/compactBoundary, window/showMessage,
// window/logMessage) into a [State]. [Env.Await] waits until a set of
// [Expectation]s hold, re-evaluating them on each notification; an
// expectation that can no longer be met, or a timeout, fails the test, so a
// hang becomes a failure and no test ever sleeps. When the test function
// returns, Run sends shutdown and exit and checks that the server ended
// cleanly.
//
// The editor answers window/workDoneProgress/create (accepting the token,
// or refusing it with [Options.RefuseProgress]). Providers are fakes chosen
// by route: see [Clients].
//
// # Wire transcripts
//
// [RunTranscript] plays a golden transcript: a txtar file whose comment
// explains the scenario, whose "editor" section holds the frames the editor
// sends, and whose "server" section holds the frames the server must send
// back, after normalization of volatile values (see [RunTranscript]). With
// update set, the server and exit sections are rewritten from the actual
// output.
package rpctest
