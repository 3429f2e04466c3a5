package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/store"
)

// artifactSet holds the artifacts the session's events reference, by id.
type artifactSet map[string]*artifactRecord

// artifactRecord is one referenced artifact: the ref its event recorded
// (to verify it) and what vtcode/listArtifacts reports.
type artifactRecord struct {
	ref     store.ArtifactRef
	info    store.ArtifactInfo
	seq     int64       // the referencing event: creation order
	summary summaryMark // where its history holds the engine's summary (summary.go)
}

// replay rebuilds the session from its log. Only the events from the last
// checkpoint on have their messages decoded (and estimated); the earlier
// ones contribute their small state.
func (s *Session) replay(ctx context.Context) error {
	cp := s.log.LastCheckpoint()
	n := 0
	needData := func(seq int64, typ string) bool { return !(seq < cp && typ == evMessages) }
	return s.log.Replay(needData, func(ev store.Event) error {
		if n++; n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return s.apply(ev, nil, ev.Seq < cp)
	})
}

// applyRoute switches the session to route r: the envelope and the
// two-pass summary made for another route do not serve.
func (s *Session) applyRoute(r route) {
	s.route = r
	s.envelope = nil
	s.twoPass.Invalidate()
}

func (a artifactSet) add(ev store.Event, ref store.ArtifactRef, trigger, mode string, summary summaryMark) {
	if ref.ID == "" {
		return
	}
	a[ref.ID] = &artifactRecord{ref: ref, seq: ev.Seq, summary: summary, info: store.ArtifactInfo{
		ID: ref.ID, CreatedAt: ev.Time, Messages: ref.Messages, Trigger: trigger, Mode: mode,
	}}
}

// ordered returns the records oldest first.
func (a artifactSet) ordered() []*artifactRecord {
	out := make([]*artifactRecord, 0, len(a))
	for _, r := range a {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].seq != out[j].seq {
			return out[i].seq < out[j].seq
		}
		return out[i].ref.ID < out[j].ref.ID
	})
	return out
}

// reportRepair tells the user that the session's log was damaged and
// repaired to its valid prefix, and where the damaged copy is.
func (s *Session) reportRepair() {
	r := s.log.Repaired()
	if r == nil {
		return
	}
	s.m.notifyShow(LevelWarning, fmt.Sprintf(
		"vtcode-ls: the event log of session %s was damaged at line %d (%s). The session was opened with the valid events before it (%d); "+
			"the %d lines from there on are no longer in the log and were saved in %s.",
		s.id, r.Line, bound(r.Reason, 200), r.KeptEvents, r.DroppedLines, r.SavedAs))
}

// tidyArtifacts runs after a replay: it removes the artifact files no event
// references (left by a compaction killed before its boundary was recorded)
// when the log is whole, applies the retention policy, and reports the
// artifacts that are damaged or missing (only their pre-compaction history
// is lost: the log holds the live one).
func (s *Session) tidyArtifacts(whole bool) {
	if whole {
		if ids, err := s.log.ArtifactIDs(); err == nil {
			for _, id := range ids {
				if s.artifacts[id] == nil {
					if err := s.log.RemoveArtifact(id); err != nil {
						s.m.logger.Warn("session: cannot remove unreferenced artifact", "session", s.id, "artifact", id, "err", err)
					}
				}
			}
		}
	}
	s.retainArtifacts()
	for _, r := range s.artifacts.ordered() {
		if _, err := s.log.CheckArtifact(r.ref); err != nil {
			s.m.logger.Warn("session: artifact unusable", "session", s.id, "artifact", r.ref.ID, "err", err)
			s.m.notifyLog(LevelWarning, fmt.Sprintf("vtcode-ls: session %s: %s; its pre-compaction history cannot be restored (the live history is intact)",
				s.id, bound(artifactProblem(r.ref.ID, err), 300)))
		}
	}
}

// retainArtifacts deletes the oldest artifacts beyond storage.keep_artifacts
// (0 keeps all). The newest are kept.
func (s *Session) retainArtifacts() {
	cfg, _, _, _ := s.ws.snapshot()
	keep := cfg.Storage.KeepArtifacts
	if keep <= 0 || len(s.artifacts) <= keep {
		return
	}
	all := s.artifacts.ordered()
	for _, r := range all[:len(all)-keep] {
		if err := s.log.RemoveArtifact(r.ref.ID); err != nil {
			s.m.logger.Warn("session: cannot remove old artifact", "session", s.id, "artifact", r.ref.ID, "err", err)
			continue
		}
		delete(s.artifacts, r.ref.ID)
	}
}

// artifactProblem describes why an artifact cannot be used.
func artifactProblem(id string, err error) string {
	var de *store.DamagedError
	switch {
	case errors.As(err, &de):
		return de.Error()
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("artifact %s is missing", id)
	}
	return fmt.Sprintf("artifact %s cannot be read: %v", id, err)
}

// listArtifacts is vtcode/listArtifacts: the artifacts the session's events
// reference whose file is there with its recorded size, oldest first. The
// counts are those recorded when the artifact was written, so they are what
// a restore yields.
func (s *Session) listArtifacts() ([]ArtifactInfo, error) {
	out := []ArtifactInfo{}
	for _, r := range s.artifacts.ordered() {
		n, err := s.log.CheckArtifact(r.ref)
		if err != nil {
			s.m.logger.Warn("session: artifact not listed", "session", s.id, "artifact", r.ref.ID, "err", err)
			continue
		}
		info := r.info
		info.Messages = n
		out = append(out, info)
	}
	return out, nil
}

// restore is vtcode/restore. The restore event carries the restored
// history, so the session never depends on the artifact again. An artifact
// that does not match what its event recorded is refused and nothing
// changes.
func (s *Session) restore(ctx context.Context, p RestoreParams) (*RestoreResult, error) {
	rec := s.artifacts[p.ArtifactID]
	if rec == nil {
		return nil, paramErr("artifactId", "no artifact %q in session %s", p.ArtifactID, s.id)
	}
	msgs, err := s.log.ReadArtifact(rec.ref)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, paramErr("artifactId", "no artifact %q in session %s: its file is missing", p.ArtifactID, s.id)
	case errors.Is(err, store.ErrDamaged):
		return nil, paramErr("artifactId", "%s; nothing was restored", artifactProblem(p.ArtifactID, err))
	case err != nil:
		return nil, fmt.Errorf("restore %s: %w", p.ArtifactID, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.syncEstimator()
	if msgs == nil {
		msgs = []history.Message{}
	}
	mark := rec.summary
	if mark == unknownSummary || mark.index() >= len(msgs) { // the artifact of a past event of an older log
		mark = markAt(findSummary(msgs))
	}
	d := restoreData{ArtifactID: p.ArtifactID, Messages: len(msgs), History: msgs, Timeline: s.cm.timeline(), Summary: mark.recorded()}
	if len(s.live) > 0 {
		d.BackupArtifactID = newID(s.m.now())
		ref, err := s.log.WriteArtifact(d.BackupArtifactID, slices.Clip(s.live))
		if err != nil {
			return nil, fmt.Errorf("restore %s: back up the live history: %w", p.ArtifactID, err)
		}
		d.Backup = &ref
		if err := ctx.Err(); err != nil {
			s.dropArtifact(ref.ID)
			return nil, err
		}
	}
	if err := s.record(evRestore, d); err != nil {
		if d.Backup != nil {
			s.dropArtifact(d.Backup.ID)
		}
		return nil, err
	}
	s.retainArtifacts()
	s.proxyReplaced()
	s.notifyPressure(s.refreshStats())
	return &RestoreResult{Messages: len(s.live), BackupArtifactID: d.BackupArtifactID}, nil
}

// dropArtifact removes an artifact written for an operation that did not
// commit.
func (s *Session) dropArtifact(id string) {
	if err := s.log.RemoveArtifact(id); err != nil {
		s.m.logger.Warn("session: cannot remove the artifact of an operation that failed", "session", s.id, "artifact", id, "err", err)
	}
}
