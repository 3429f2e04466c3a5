package session

import (
	"encoding/hex"
	"slices"
	"strings"

	"github.com/vtcode/vtcode-ls/clearing"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/store"
)

// This file is the mirror of a proxied agent's conversation: a digest per
// message of what the agent sent (history.MessageKey) and how it lines up
// with the live history. The agent's messages [0, covered) are represented
// by live[:head] (a summary after a compaction), and live[head:] are the
// agent's messages [covered:] one for one. So after a compaction the agent
// goes on sending its full history and the session keeps mapping that
// prefix onto the summary. The mirror says what a request is
// ([mirror.classify]); proxy.go acts on it.

// Disposition says how a proxied request relates to the conversation its
// session records ([ProxyPlan.Disposition]). Its string is the spelling
// the proxy's stats and logs show.
type Disposition string

// Dispositions of a proxied request.
const (
	ProxyAppend Disposition = "append" // extends the conversation
	ProxyBranch Disposition = "branch" // diverges from it (a rewind or an edit): a new session
	ProxyWindow Disposition = "window" // the agent's fresh window after its own compaction
	ProxyReplay Disposition = "replay" // a prefix of what is recorded (a retry): nothing to record
	ProxySide   Disposition = "side"   // the agent's compaction request
	ProxyCounts Disposition = "count"  // a token count
)

func (d Disposition) String() string { return string(d) }

// mirror is a session's mirror of the agent's conversation; owned by the
// holder of the session's queue.
type mirror struct {
	init     bool
	keys     []string // digests of the agent's messages as recorded
	covered  int      // agent messages represented by live[:head]
	head     int
	unmapped bool // resumed after a compaction: the next request starts a window
	// compactions is the session's compaction count the mirror is aligned
	// with; extra counts the placeholder results in live[head:] that
	// stand for no agent message (see Session.proxyRealign).
	compactions, extra int
	awaiting           bool // the agent's compaction request was answered
	// summaries are the telling lines of the agent's latest compaction
	// answers (see carriesSummary): a window that follows its compaction
	// out of order (Gemini CLI's own and a /compress racing) still carries
	// one.
	summaries []string
	window    string // the agent's window id, if it names one
	turn      uint64
	pending   map[uint64]*proxyTurn
}

// proxyTurn is a prepared request waiting for its answer.
type proxyTurn struct {
	key    string
	disp   Disposition
	keys   []string
	msgs   []history.Message // the agent's messages
	c      int               // common prefix with the mirror at prepare time
	window string
	// request is the record of the request for the session's timeline
	// (contextmap.go), written with the answer; horizon is the cleared
	// horizon of an agent's fresh window, kept once the window replaced
	// the history.
	request requestData
	horizon clearing.Horizon
}

// maxSummaries bounds mirror.summaries: an agent's compaction is a request
// or two (Gemini CLI verifies its snapshot), two may race.
const maxSummaries = 4

// classify says what a request with digests keys is to the conversation
// the mirror holds, and how many messages they share from the start.
func (px *mirror) classify(r ProxyRequest, keys []string) (Disposition, int) {
	c := commonPrefix(px.keys, keys)
	switch {
	case r.Kind == ProxyCount:
		return ProxyCounts, c
	case r.Kind == ProxyAgentCompaction:
		return ProxySide, c
	case px.unmapped:
		return ProxyWindow, c
	case c == len(px.keys):
		return ProxyAppend, c
	case c == len(keys):
		return ProxyReplay, c
	case px.expectsWindow(r, c):
		return ProxyWindow, c
	}
	return ProxyBranch, c
}

// affinity is how well a request with digests keys fits the mirror, for
// choosing the thread it goes to: the messages they share from the start,
// at least 1 where the mirror takes any conversation (an empty session) or
// expects the agent's fresh window.
func (px *mirror) affinity(r ProxyRequest, keys []string) int {
	c := commonPrefix(px.keys, keys)
	if len(px.keys) == 0 || px.unmapped || px.expectsWindow(r, c) {
		return max(c, 1)
	}
	return c
}

// expectsWindow reports whether a request that shares c messages with the
// mirror is the agent's fresh window: the agent's compaction request was
// answered, the agent names another window, or a request that shares
// nothing opens with one of the agent's recent compaction answers.
func (px *mirror) expectsWindow(r ProxyRequest, c int) bool {
	return px.awaiting || (r.WindowID != "" && px.window != "" && r.WindowID != px.window) ||
		c == 0 && px.carriesSummary(r.Messages)
}

// carriesSummary reports whether a request that shares no message with the
// mirror opens with one of the agent's recent compaction answers: its
// window, though another request of the conversation came in between.
func (px *mirror) carriesSummary(msgs []history.Message) bool {
	for i := range min(len(msgs), 3) {
		text := msgs[i].Text()
		for _, line := range px.summaries {
			if strings.Contains(text, line) {
				return true
			}
		}
	}
	return false
}

// answered notes the answer to the agent's compaction request: the
// agent's next divergent request is its fresh window, and it carries the
// answer's telling line.
func (px *mirror) answered(answer string) {
	px.awaiting = true
	if line := tellingLine(answer); line != "" {
		px.summaries = append(px.summaries[max(0, len(px.summaries)-maxSummaries+1):], line)
	}
}

// tellingLine returns the longest line of an agent's compaction answer, the
// one its next window carries as it is whatever the agent wraps the summary
// in; "" when the answer has no line long enough to tell it apart.
func tellingLine(answer string) string {
	best := ""
	for line := range strings.Lines(answer) {
		if line = strings.TrimSpace(line); len(line) > len(best) {
			best = line
		}
	}
	if len(best) < 40 {
		return ""
	}
	return best
}

func commonPrefix(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// load builds the mirror of a session the proxy has not seen in this
// process, whose live history is live after compactions compactions: the
// recorded alignment saved, else the live history one for one when no
// compaction replaced it; a compacted session without a record takes the
// agent's next request as its new window. fits is false when saved does
// not fit the history (then too the next request is a new window).
func (px *mirror) load(live []history.Message, compactions int, saved *mirrorData) (fits bool) {
	px.init = true
	px.pending = map[uint64]*proxyTurn{}
	px.compactions = compactions
	if saved != nil {
		prefix, ok := saved.prefix(len(live))
		if !ok {
			px.unmapped = len(live) > 0
			return false
		}
		px.keys, px.covered, px.head, px.window = prefix, saved.Covered, saved.Head, saved.Window
		for i := saved.Head; i < len(live); i++ {
			if saved.Head > 0 && live[i].Role == history.Tool && live[i].Text() == history.InterruptedResult {
				px.extra++
				continue
			}
			px.keys = append(px.keys, history.MessageKey(&live[i]))
		}
		return true
	}
	if compactions > 0 {
		px.unmapped = len(live) > 0
		return true
	}
	for i := range live {
		px.keys = append(px.keys, history.MessageKey(&live[i]))
	}
	return true
}

// current reports whether the mirror still lines up with live, the live
// history after compactions compactions: one for one past its head, or
// waiting for a window anyway.
func (px *mirror) current(live []history.Message, compactions int) bool {
	return px.unmapped || len(live) == px.head+len(px.keys)-px.covered+px.extra && px.compactions == compactions
}

// align lines the mirror up with live from their ends: the live messages
// at the end that are still the agent's own map onto them (skipping the
// placeholder results a compaction left, history.InterruptedResult),
// everything before stands for the rest of the agent's conversation.
func (px *mirror) align(live []history.Message, compactions int) {
	px.compactions = compactions
	i, j, extra := len(live)-1, len(px.keys)-1, 0
	for i >= 0 && j >= 0 {
		m := &live[i]
		if history.MessageKey(m) == px.keys[j] {
			i, j = i-1, j-1
			continue
		}
		if m.Role == history.Tool && m.Text() == history.InterruptedResult {
			i, extra = i-1, extra+1
			continue
		}
		break
	}
	px.covered, px.head, px.extra = j+1, i+1, extra
}

// compacted realigns the mirror after a compaction of pre (the summary
// part live[:head] and the agent's messages [covered:]) recorded the
// agent's messages keys and left live: the live history's tail that is
// still the agent's messages maps onto them, the rest is the new summary
// part.
func (px *mirror) compacted(live, pre []history.Message, keys []string, compactions int) {
	limit := min(len(keys)-px.covered, len(live), len(pre)-px.head)
	k := 0
	for k < limit && history.MessageKey(&live[len(live)-1-k]) == history.MessageKey(&pre[len(pre)-1-k]) {
		k++
	}
	px.keys = slices.Clone(keys)
	px.covered = len(keys) - k
	px.head = len(live) - k
	px.compactions, px.extra = compactions, 0
}

// newWindow starts the mirror again on the agent's fresh window, whose
// messages (and answer) have digests keys: a turn's state and the agent's
// recent compaction answers carry over.
func (px *mirror) newWindow(keys []string, window string, compactions int) {
	*px = mirror{init: true, keys: keys, window: window, turn: px.turn, pending: px.pending,
		compactions: compactions, summaries: px.summaries}
}

// liveIndex returns the index in live of the agent's message j (digest
// key), or -1.
func (px *mirror) liveIndex(live []history.Message, j int, key string) int {
	li := px.head + j - px.covered
	if px.extra == 0 {
		if li < len(live) {
			return li
		}
		return -1
	}
	for d := 0; d <= px.extra && li+d < len(live); d++ {
		if history.MessageKey(&live[li+d]) == key {
			return li + d
		}
	}
	return -1
}

// evProxyMirror records how the live history lines up with the agent's
// conversation whenever that is not simply one for one (after a compaction,
// the agent's own new window, a branch of a compacted conversation), so
// that a restarted daemon goes on mapping the agent's requests onto the
// summary instead of taking the next one for a new window, which would
// record a needless boundary and compact the agent's whole history again.
// A boundary or a restore voids it.
const evProxyMirror = "proxy_mirror"

// mirrorData is the payload of evProxyMirror: the agent's messages
// [0, Covered) are live[:Head], whose digests Prefix holds (hex); the
// agent's messages from Covered on are live[Head:], one for one, but for
// placeholder results (history.InterruptedResult) the agent never sent.
type mirrorData struct {
	Covered int      `json:"covered"`
	Head    int      `json:"head"`
	Prefix  []string `json:"prefix,omitempty"`
	Window  string   `json:"window,omitempty"`
}

// saved returns the record of the mirror's alignment, for a session after
// compactions compactions; ok is false when it is one for one and needs
// none (see evProxyMirror).
func (px *mirror) saved(compactions int) (d mirrorData, ok bool) {
	if px.unmapped || px.covered == 0 && px.head == 0 && compactions == 0 {
		return mirrorData{}, false
	}
	d = mirrorData{Covered: px.covered, Head: px.head, Window: px.window, Prefix: make([]string, 0, px.covered)}
	for _, k := range px.keys[:px.covered] {
		d.Prefix = append(d.Prefix, hex.EncodeToString([]byte(k)))
	}
	return d, true
}

// prefix decodes the digests of a mirror record for a live history of n
// messages; ok is false when the record does not fit it (the store is
// input like any other).
func (d *mirrorData) prefix(n int) ([]string, bool) {
	if d.Covered < 0 || d.Head < 0 || d.Head > n || len(d.Prefix) != d.Covered {
		return nil, false
	}
	keys := make([]string, len(d.Prefix))
	for i, h := range d.Prefix {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) == 0 {
			return nil, false
		}
		keys[i] = string(b)
	}
	return keys, true
}

// applyMirror folds a mirror record in; one before the last checkpoint
// describes a history that no longer exists.
func (s *Session) applyMirror(ev store.Event, data any, past bool) error {
	if past {
		return nil
	}
	d, err := payload[mirrorData](ev, data)
	if err != nil {
		return err
	}
	s.pxSaved = &d
	return nil
}

// saveMirror records the mirror's alignment when it is not one for one
// (see evProxyMirror). The mirror in memory is right either way: a failed
// record only costs a restarted daemon the alignment, so it is logged.
func (s *Session) saveMirror() {
	d, ok := s.px.saved(s.compactions)
	if !ok {
		return
	}
	if err := s.record(evProxyMirror, d); err != nil {
		s.m.logger.Warn("session: the proxy's alignment with the agent's conversation was not saved; after a restart the agent's next request starts a new window",
			"session", s.id, "err", err)
	}
}

// proxyInit builds the mirror of a session the proxy has not seen in this
// process (see mirror.load).
func (s *Session) proxyInit() {
	if s.px.init {
		return
	}
	if !s.px.load(s.live, s.compactions, s.pxSaved) {
		s.m.logger.Warn("session: the proxy's recorded alignment does not fit the history; the agent's next request starts a new window", "session", s.id)
	}
}

// proxyRealign lines the mirror up again with a live history that another
// call changed (a compaction through vtcode/compact, a restore, messages
// appended through the protocol), as after a compaction (mirror.align),
// and records it. A compaction made while the agent's last call had no
// result yet leaves a placeholder result (history.InterruptedResult) that
// the agent's real one follows; the alignment skips it, and projections use
// the agent's messages there.
func (s *Session) proxyRealign() {
	if !s.px.current(s.live, s.compactions) {
		s.px.align(s.live, s.compactions)
		s.saveMirror()
	}
}

// proxyReplaced aligns the mirror at once after another call replaced the
// live history (a compaction through vtcode/compact, a restore), so that the
// alignment is recorded before a restart could lose it.
func (s *Session) proxyReplaced() {
	if s.px.init && !s.px.unmapped && len(s.px.keys) > 0 {
		s.px.align(s.live, s.compactions)
		s.saveMirror()
	}
}
