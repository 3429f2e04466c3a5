package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/session"
)

func (e *env) artifacts(id string) []session.ArtifactInfo {
	e.t.Helper()
	list, err := e.m.ListArtifacts(context.Background(), id, nil)
	if err != nil {
		e.t.Fatalf("ListArtifacts: %v", err)
	}
	return list
}

func (e *env) preview(id string) *session.CompactPreview {
	e.t.Helper()
	p, err := e.m.PreviewCompact(context.Background(), session.CompactParams{SessionID: id}, nil)
	if err != nil {
		e.t.Fatalf("PreviewCompact: %v", err)
	}
	return p
}

// TestPreviewCommitsNothing: a preview returns the summary and the history
// a compaction would commit, and leaves the session as it was, also on disk.
func TestPreviewCommitsNothing(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{ContextWindow: 32000})
	e.append(id, turns(12, 3000)...)
	before := jsonOf(t, e.history(id))

	prog := newProgress()
	p, err := e.m.PreviewCompact(context.Background(), session.CompactParams{SessionID: id}, prog)
	if err != nil {
		t.Fatal(err)
	}
	if p.PreviewID == "" || !p.Editable || p.Mode != "local" || p.OriginalMessageCount != 72 || p.CompactedMessageCount != len(p.Messages) ||
		p.CompactedMessageCount >= 72 || p.CompactedTokens >= p.OriginalTokens {
		t.Fatalf("preview = %+v", p)
	}
	if compaction.SummaryText(&p.Messages[0]) != p.Summary || !compaction.IsSummaryMessage(&p.Messages[0]) || !strings.Contains(p.Summary, "Step 0") {
		t.Errorf("summary %q, first message %q", p.Summary, p.Messages[0].Content.Text())
	}
	if ev := prog.list(); ev[0] != "begin: Previewing compaction..." || ev[len(ev)-1] != "end: "+p.Message || !strings.Contains(p.Message, "Nothing was changed.") {
		t.Errorf("progress = %q", ev)
	}
	check := func(when string) {
		if got := jsonOf(t, e.history(id)); got != before {
			t.Errorf("%s: the history changed", when)
		}
		if a := e.artifacts(id); len(a) != 0 {
			t.Errorf("%s: artifacts %+v", when, a)
		}
		if st := e.stats(id); st.Compactions != 0 || st.Messages != 72 {
			t.Errorf("%s: stats %+v", when, st)
		}
		if n := len(e.rec.boundaries()); n != 0 {
			t.Errorf("%s: %d boundary notifications", when, n)
		}
	}
	check("after the preview")
	e.restart("")
	e.open(session.OpenParams{SessionID: id})
	check("after a restart")
	// The preview lived in that process only.
	var pe *session.ParamError
	if _, err := e.m.CommitPreview(context.Background(), session.CommitParams{SessionID: id, PreviewID: p.PreviewID}); !errors.As(err, &pe) || pe.Path != "previewId" {
		t.Errorf("commit after a restart: %v", err)
	}
}

// TestCommitPreview commits exactly the previewed history, or with the
// user's summary, as a manual compaction whose artifact restores the old
// history.
func TestCommitPreview(t *testing.T) {
	ctx := context.Background()
	t.Run("as previewed", func(t *testing.T) {
		e := newEnv(t, session.Options{}, "")
		id := e.open(session.OpenParams{ContextWindow: 32000})
		e.append(id, turns(12, 3000)...)
		old := jsonOf(t, e.history(id))
		p := e.preview(id)
		res, err := e.m.CommitPreview(ctx, session.CommitParams{SessionID: id, PreviewID: p.PreviewID})
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonOf(t, e.history(id)); got != jsonOf(t, p.Messages) {
			t.Errorf("committed history differs from the preview")
		}
		if res.Trigger != "manual" || res.ArtifactID == "" || res.CompactedMessageCount != len(p.Messages) || res.CompactedTokens != p.CompactedTokens ||
			!strings.Contains(res.Message, "the previewed summary") {
			t.Errorf("result = %+v", res)
		}
		if b := e.rec.boundaries(); len(b) != 1 || b[0].ArtifactID != res.ArtifactID {
			t.Errorf("boundaries = %+v", b)
		}
		if _, err := e.m.Restore(ctx, session.RestoreParams{SessionID: id, ArtifactID: res.ArtifactID}); err != nil {
			t.Fatal(err)
		}
		if got := jsonOf(t, e.history(id)); got != old {
			t.Errorf("the artifact is not the history before the commit")
		}
		// A preview commits once.
		var pe *session.ParamError
		if _, err := e.m.CommitPreview(ctx, session.CommitParams{SessionID: id, PreviewID: p.PreviewID}); !errors.As(err, &pe) || pe.Path != "previewId" {
			t.Errorf("second commit: %v", err)
		}
	})
	t.Run("edited summary", func(t *testing.T) {
		e := newEnv(t, session.Options{}, "")
		id := e.open(session.OpenParams{ContextWindow: 32000})
		e.append(id, turns(12, 3000)...)
		p := e.preview(id)
		edited := "## Goal\nFix every module; never touch vendor/.\n\n## Next steps\n1. Run go test ./... once more."
		res, err := e.m.CommitPreview(ctx, session.CommitParams{SessionID: id, PreviewID: p.PreviewID, Summary: &edited})
		if err != nil {
			t.Fatal(err)
		}
		h := e.history(id)
		if len(h) != len(p.Messages) || !history.Equal(h[0], compaction.SummaryMessage(edited)) {
			t.Fatalf("history[0] = %q", h[0].Content.Text())
		}
		if jsonOf(t, h[1:]) != jsonOf(t, p.Messages[1:]) {
			t.Errorf("the retained messages changed")
		}
		if !strings.Contains(res.Message, "the edited summary") || res.CompactedTokens >= p.CompactedTokens {
			t.Errorf("result = %+v (preview %d tokens)", res, p.CompactedTokens)
		}
		if st := e.stats(id); st.Compactions != 1 || st.LastCompaction == nil || st.LastCompaction.ArtifactID != res.ArtifactID {
			t.Errorf("stats = %+v", st)
		}
	})
	t.Run("bad summaries change nothing", func(t *testing.T) {
		e := newEnv(t, session.Options{}, "")
		id := e.open(session.OpenParams{ContextWindow: 32000})
		e.append(id, turns(12, 3000)...)
		p := e.preview(id)
		before := jsonOf(t, e.history(id))
		for _, bad := range []string{"  \n", strings.Repeat("All of it, verbatim. ", 3000)} {
			var pe *session.ParamError
			if _, err := e.m.CommitPreview(ctx, session.CommitParams{SessionID: id, PreviewID: p.PreviewID, Summary: &bad}); !errors.As(err, &pe) || pe.Path != "summary" {
				t.Errorf("summary of %d bytes: %v", len(bad), err)
			}
		}
		if jsonOf(t, e.history(id)) != before || len(e.artifacts(id)) != 0 {
			t.Fatal("a refused commit changed the session")
		}
		// The preview is still there.
		if _, err := e.m.CommitPreview(ctx, session.CommitParams{SessionID: id, PreviewID: p.PreviewID}); err != nil {
			t.Errorf("commit after refused edits: %v", err)
		}
	})
}

// TestCommitPreviewAfterTheHistoryMovedOn fails cleanly, changing nothing,
// when anything changed the live history since the preview; a newer
// preview replaces an older one.
func TestCommitPreviewAfterTheHistoryMovedOn(t *testing.T) {
	ctx := context.Background()
	moves := map[string]func(e *env, id string){
		"append": func(e *env, id string) { e.append(id, history.NewText(history.User, "One more thing: keep the logs.")) },
		"prepare": func(e *env, id string) {
			if _, err := e.m.PrepareRequest(ctx, session.PrepareParams{SessionID: id, Messages: turns(1, 100)}, nil); err != nil {
				t.Fatal(err)
			}
		},
		"response": func(e *env, id string) {
			if _, err := e.m.RecordResponse(ctx, session.RecordParams{SessionID: id, Message: history.NewText(history.Assistant, "Done.")}); err != nil {
				t.Fatal(err)
			}
		},
		"compaction": func(e *env, id string) {
			if _, err := e.m.Compact(ctx, session.CompactParams{SessionID: id}, nil); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, move := range moves {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, session.Options{}, "")
			id := e.open(session.OpenParams{ContextWindow: 32000})
			e.append(id, turns(12, 3000)...)
			p := e.preview(id)
			move(e, id)
			before, arts := jsonOf(t, e.history(id)), len(e.artifacts(id))
			_, err := e.m.CommitPreview(ctx, session.CommitParams{SessionID: id, PreviewID: p.PreviewID})
			if !errors.Is(err, session.ErrPreviewStale) || !strings.Contains(err.Error(), "preview again") {
				t.Fatalf("commit = %v", err)
			}
			if jsonOf(t, e.history(id)) != before || len(e.artifacts(id)) != arts {
				t.Error("a stale commit changed the session")
			}
		})
	}
	t.Run("newer preview", func(t *testing.T) {
		e := newEnv(t, session.Options{}, "")
		id := e.open(session.OpenParams{ContextWindow: 32000})
		e.append(id, turns(12, 3000)...)
		old, p := e.preview(id), e.preview(id)
		var pe *session.ParamError
		if _, err := e.m.CommitPreview(ctx, session.CommitParams{SessionID: id, PreviewID: old.PreviewID}); !errors.As(err, &pe) || pe.Path != "previewId" {
			t.Errorf("old preview: %v", err)
		}
		if _, err := e.m.CommitPreview(ctx, session.CommitParams{SessionID: id, PreviewID: p.PreviewID}); err != nil {
			t.Errorf("newer preview: %v", err)
		}
	})
	t.Run("already compact", func(t *testing.T) {
		e := newEnv(t, session.Options{}, "")
		id := e.open(session.OpenParams{ContextWindow: 32000})
		e.append(id, history.NewText(history.User, "hi"))
		p := e.preview(id)
		if p.PreviewID != "" || p.Mode != "none" || p.Message != "Nothing to preview: Conversation is already compact." {
			t.Errorf("preview = %+v", p)
		}
	})
}
