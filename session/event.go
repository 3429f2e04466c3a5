package session

import (
	"encoding/json"
	"fmt"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/store"
)

// The session log: its event types, their payloads, and the one place an
// event changes the session. An event is decoded into a [change], and each
// part of the session (usage, receipt, cache, context map, policy, the live
// history) applies the change to itself; the parts do not see one another.
// The payload types here are the log's format: their JSON names are what a
// log written by an older version holds, and they never reach a client.

// Event types of the session log. The parts of the session add their own:
// evHorizon (cache.go), evRequest (contextmap.go), evReceipt and evBill (receipt.go),
// evProxyMirror (mirror.go).
const (
	evMessages    = "messages"
	evResponse    = "response"
	evBoundary    = "compact_boundary"
	evRestore     = "restore"
	evPolicy      = "policy"
	evModelSwitch = "model_switch"
)

// Event payloads.
type (
	messagesData struct {
		Messages []history.Message `json:"messages"`
		Request  *requestData      `json:"request,omitempty"` // the prepared request's pressure (contextmap.go)
	}
	responseData struct {
		Message    history.Message `json:"message"`
		Usage      *history.Usage  `json:"usage,omitempty"`
		StopReason string          `json:"stopReason,omitempty"`
		// RequestEstimate is the estimate (projection + prefix) of the last
		// request prepared before the response, for the usage comparison.
		RequestEstimate int `json:"requestEstimate,omitempty"`
		// Receipt is the answer's bill (receipt.go).
		Receipt *receiptLine `json:"receipt,omitempty"`
	}
	// boundaryData carries the new live history, so replay needs no
	// recomputation and no artifact (it is a checkpoint), and the ref of the
	// artifact holding the history before it. What a compaction commits
	// together with it is in the same event, so that the commit is one
	// append: the route of a model switch, the response of a
	// recordResponse whose compaction block the provider made.
	boundaryData struct {
		Boundary
		Messages []history.Message  `json:"messages"`
		Artifact *store.ArtifactRef `json:"artifact,omitempty"`
		Route    *route             `json:"route,omitempty"`
		Response *responseData      `json:"response,omitempty"`
		Timeline *timelineData      `json:"timeline,omitempty"` // the context map's state (contextmap.go)
		Cost     *receiptLine       `json:"cost,omitempty"`     // an older log's bill of the compaction's calls (receipt.go)
		Bills    []string           `json:"bills,omitempty"`    // the attempts whose bills it commits (receipt.go)
		// Summary is the index in Messages of the engine's summary message,
		// -1 for none (summary.go); logs of older versions have none
		// recorded: replay finds it once in the messages.
		Summary *int `json:"summaryIndex,omitempty"`
	}
	// restoreData names the artifact restored and carries its messages
	// (History, a checkpoint), so the log never depends on the artifact.
	// Logs of older versions have no History: replay then reads the
	// artifact, checking its message count.
	restoreData struct {
		ArtifactID       string             `json:"artifactId"`
		Messages         int                `json:"messages"`
		BackupArtifactID string             `json:"backupArtifactId,omitempty"`
		Backup           *store.ArtifactRef `json:"backup,omitempty"`
		History          []history.Message  `json:"history"`
		Timeline         *timelineData      `json:"timeline,omitempty"`     // the context map's state (contextmap.go)
		Summary          *int               `json:"summaryIndex,omitempty"` // as boundaryData's
	}
	policyData struct {
		Policy json.RawMessage `json:"policy"`
	}
)

// Payloads decoded on replay of events before the last checkpoint: the same
// events without their messages.
type (
	responseUsage struct {
		Usage           *history.Usage `json:"usage,omitempty"`
		RequestEstimate int            `json:"requestEstimate,omitempty"`
		Receipt         *receiptLine   `json:"receipt,omitempty"`
	}
	boundaryMeta struct {
		Boundary
		Artifact *store.ArtifactRef `json:"artifact,omitempty"`
		Route    *route             `json:"route,omitempty"`
		Response *responseUsage     `json:"response,omitempty"`
		Timeline *timelineData      `json:"timeline,omitempty"`
		Cost     *receiptLine       `json:"cost,omitempty"`
		Bills    []string           `json:"bills,omitempty"`
		Summary  *int               `json:"summaryIndex,omitempty"`
	}
	restoreMeta struct {
		BackupArtifactID string             `json:"backupArtifactId,omitempty"`
		Backup           *store.ArtifactRef `json:"backup,omitempty"`
		Timeline         *timelineData      `json:"timeline,omitempty"`
		Summary          *int               `json:"summaryIndex,omitempty"`
	}
)

// A change is one event decoded into what the parts of a session read of
// it. A field is set only when the event carries it.
type change struct {
	ev store.Event

	// newHistory marks a boundary or a restore: the history starts again
	// (also on replay of one before the last checkpoint).
	newHistory bool
	// summary is where the new history holds the engine's summary
	// (summary.go), with newHistory.
	summary summaryMark
	// The live history: msgs replace it when replace is set (a boundary or a
	// restore applied with its messages), else they are appended.
	replace bool
	msgs    []history.Message
	// oldRestore is the artifact of a restore of an older log, which does
	// not carry its messages: they are read from it before the change
	// applies.
	oldRestore *store.ArtifactRef

	// An answer: its message (a live response), its usage, the estimate of
	// the request it answered, and its bill.
	answer   *history.Message
	usage    *history.Usage
	estimate int
	receipt  *receiptLine

	request  *requestData      // a prepared request's record
	route    *route            // a model switch, or the one a boundary commits
	switched bool              // the event is a model switch
	horizon  *horizonData      // a move of the cleared horizon
	boundary *Boundary         // a compaction boundary
	artifact store.ArtifactRef // the boundary's artifact, or the restore's backup (no ID: none)
	cost     *receiptLine      // the bill of a boundary's compaction calls (an older log)
	claims   []string          // the attempts whose bills a boundary commits
	bill     *billData         // a summarizer call's bill
	restore  bool              // a restore
	timeline *timelineData     // the context map's state a boundary or restore carried
	patch    *json.RawMessage  // a policy patch
}

// record appends an event durably and applies it. data is the typed
// payload (one of the *Data types or route); it is applied as is, without
// a round trip through JSON, so the estimates its messages carry are kept.
func (s *Session) record(typ string, data any) error {
	if typ != evBill {
		// The bills of calls that answered go first: a boundary commits
		// bills already in the log.
		if err := s.flushBills(); err != nil {
			return err
		}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", typ, err)
	}
	ev := store.Event{Type: typ, Time: s.m.now(), Data: raw, Messages: s.countAfter(data),
		Checkpoint: typ == evBoundary || typ == evRestore}
	if err := s.log.Append(ev); err != nil {
		return fmt.Errorf("record %s: %w", typ, err)
	}
	ev.Seq = s.log.LastSeq() // the session is the log's only writer
	return s.apply(ev, data, false)
}

// countAfter predicts the live length after an event, for [store.Event.Messages].
func (s *Session) countAfter(data any) int {
	switch d := data.(type) {
	case messagesData:
		return len(s.live) + len(d.Messages)
	case responseData:
		return len(s.live) + 1
	case boundaryData:
		return len(d.Messages)
	case restoreData:
		return d.Messages
	}
	return len(s.live)
}

// payload returns the typed payload of ev: data when it has type T, else ev's
// decoded Data (replay).
func payload[T any](ev store.Event, data any) (T, error) {
	if d, ok := data.(T); ok {
		return d, nil
	}
	var d T
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		return d, fmt.Errorf("event %d (%s): %w", ev.Seq, ev.Type, err)
	}
	return d, nil
}

// apply applies one event to the in-memory state. It is the only code that
// changes the live history, both live (data is the typed payload) and on
// replay (data is nil), so a resumed session is exactly what it was. With
// past set (replay of an event before the last checkpoint, whose live
// history the checkpoint replaces) the messages are not decoded: only the
// small state (usage, compactions, artifacts, policy, route) is applied.
// An event that cannot be decoded changes nothing.
func (s *Session) apply(ev store.Event, data any, past bool) error {
	if ev.Type == evProxyMirror {
		return s.applyMirror(ev, data, past)
	}
	dec, known := decoders[ev.Type]
	if !known {
		s.m.logger.Warn("session: unknown event type ignored", "session", s.id, "seq", ev.Seq, "type", ev.Type)
		return nil
	}
	c, err := dec(ev, data, past)
	if err != nil {
		return err
	}
	if ref := c.oldRestore; ref != nil {
		if c.msgs, err = s.log.ReadArtifact(*ref); err != nil {
			return fmt.Errorf("event %d (%s): %w", ev.Seq, ev.Type, err)
		}
		c.summary = markOf(nil, c.msgs, true)
	}
	s.applyChange(&c)
	return nil
}

// applyChange lets every part of the session apply c. The route goes first:
// the usage of the answer a boundary commits is read under the route the
// boundary switched to.
func (s *Session) applyChange(c *change) {
	prior := s.summary // where the history an artifact of c holds has its summary
	if c.newHistory {
		s.pxSaved = nil // a new history: the proxy's mirror of the old one is void
		s.summary = c.summary
	}
	if c.route != nil {
		s.applyRoute(*c.route)
	}
	s.cache.apply(c)
	if c.replace {
		s.live = nil
	}
	s.appendLive(c.msgs...)
	var cat *catalog.Catalog // the prices of the answer or of the compaction
	if c.usage != nil || c.receipt != nil || c.cost != nil || c.bill != nil {
		cat = s.catalog()
	}
	s.usage.apply(c, cat, s.route)
	s.rc.apply(c, cat)
	s.cm.apply(c)
	s.preview.apply(c)
	if s.pol.apply(c) {
		s.syncEstimator()
	}
	if c.request != nil {
		s.prefix, s.reserved = c.request.Prefix, c.request.Reserved
	}
	if c.boundary != nil {
		s.compactions++
		s.lastCompaction = c.boundary
		s.artifacts.add(c.ev, c.artifact, c.boundary.Trigger, c.boundary.Mode, prior)
		s.ask = askState{} // a compaction answers a proposal (ask.go)
	}
	if c.restore {
		s.artifacts.add(c.ev, c.artifact, "restore", "", prior)
		s.envelope = nil
		s.twoPass.Invalidate()
	}
}

// decoders decode the payload of each event type into a change: data is
// the typed payload of a live event, nil on replay; past marks an event
// before the last checkpoint.
var decoders = map[string]func(ev store.Event, data any, past bool) (change, error){
	evMessages:    decodeMessages,
	evResponse:    decodeResponse,
	evBoundary:    decodeBoundary,
	evRestore:     decodeRestore,
	evPolicy:      decodePolicy,
	evModelSwitch: decodeModelSwitch,
	evHorizon:     decodeHorizon,
	evRequest:     decodeRequest,
	evReceipt:     decodeReceipt,
	evBill:        decodeBill,
}

func decodeMessages(ev store.Event, data any, past bool) (change, error) {
	if past {
		return change{ev: ev}, nil // the checkpoint after it holds its messages and its record
	}
	d, err := payload[messagesData](ev, data)
	return change{ev: ev, msgs: d.Messages, request: d.Request}, err
}

func decodeResponse(ev store.Event, data any, past bool) (change, error) {
	if past {
		d, err := payload[responseUsage](ev, nil)
		return change{ev: ev, usage: d.Usage, estimate: d.RequestEstimate, receipt: d.Receipt}, err
	}
	d, err := payload[responseData](ev, data)
	c := change{ev: ev, usage: d.Usage, estimate: d.RequestEstimate, receipt: d.Receipt}
	if err == nil {
		c.answer, c.msgs = &d.Message, []history.Message{d.Message}
	}
	return c, err
}

func decodeBoundary(ev store.Event, data any, past bool) (change, error) {
	var (
		d   boundaryMeta
		err error
		c   = change{ev: ev, newHistory: true}
	)
	if past {
		d, err = payload[boundaryMeta](ev, nil)
	} else {
		var full boundaryData
		full, err = payload[boundaryData](ev, data)
		d = boundaryMeta{Boundary: full.Boundary, Artifact: full.Artifact, Route: full.Route,
			Timeline: full.Timeline, Cost: full.Cost, Bills: full.Bills, Summary: full.Summary}
		if r := full.Response; r != nil {
			d.Response = &responseUsage{Usage: r.Usage, RequestEstimate: r.RequestEstimate, Receipt: r.Receipt}
		}
		c.replace, c.msgs = true, full.Messages
	}
	if err != nil {
		return change{}, err
	}
	b := d.Boundary
	c.boundary, c.route, c.timeline, c.cost, c.claims = &b, d.Route, d.Timeline, d.Cost, d.Bills
	c.summary = markOf(d.Summary, c.msgs, !past)
	c.artifact = store.ArtifactRef{ID: b.ArtifactID}
	if d.Artifact != nil {
		c.artifact = *d.Artifact
	}
	if r := d.Response; r != nil {
		c.usage, c.estimate, c.receipt = r.Usage, r.RequestEstimate, r.Receipt
	}
	return c, nil
}

func decodeRestore(ev store.Event, data any, past bool) (change, error) {
	var (
		d   restoreMeta
		err error
		c   = change{ev: ev, newHistory: true, restore: true}
	)
	if past {
		d, err = payload[restoreMeta](ev, nil)
	} else {
		var full restoreData
		full, err = payload[restoreData](ev, data)
		d = restoreMeta{BackupArtifactID: full.BackupArtifactID, Backup: full.Backup, Timeline: full.Timeline, Summary: full.Summary}
		c.replace, c.msgs = true, full.History
		if full.History == nil { // an older log: the artifact holds the history
			c.oldRestore = &store.ArtifactRef{ID: full.ArtifactID, Messages: full.Messages}
		}
	}
	if err != nil {
		return change{}, err
	}
	c.timeline = d.Timeline
	c.summary = markOf(d.Summary, c.msgs, !past && c.oldRestore == nil) // an older log's artifact: apply reads it
	if d.BackupArtifactID != "" {
		c.artifact = store.ArtifactRef{ID: d.BackupArtifactID}
		if d.Backup != nil {
			c.artifact = *d.Backup
		}
	}
	return c, nil
}

func decodePolicy(ev store.Event, data any, _ bool) (change, error) {
	d, err := payload[policyData](ev, data)
	return change{ev: ev, patch: &d.Policy}, err
}

func decodeModelSwitch(ev store.Event, data any, _ bool) (change, error) {
	d, err := payload[route](ev, data)
	return change{ev: ev, route: &d, switched: true}, err
}

func decodeHorizon(ev store.Event, data any, past bool) (change, error) {
	if past {
		return change{ev: ev}, nil // the checkpoint after it starts a new history
	}
	d, err := payload[horizonData](ev, data)
	return change{ev: ev, horizon: &d}, err
}

func decodeRequest(ev store.Event, data any, _ bool) (change, error) {
	d, err := payload[requestData](ev, data)
	return change{ev: ev, request: &d}, err
}

func decodeReceipt(ev store.Event, data any, _ bool) (change, error) {
	l, err := payload[receiptLine](ev, data)
	return change{ev: ev, receipt: &l}, err
}

func decodeBill(ev store.Event, data any, _ bool) (change, error) {
	d, err := payload[billData](ev, data)
	return change{ev: ev, bill: &d}, err
}
