package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/session"
)

// A method is one entry of the method table: how a request is checked,
// decoded, ordered and run.
type method struct {
	notification   bool // a notification method: a request with an id is invalid
	inline         bool // runs on the read loop (initialize)
	drains         bool // waits for the vtcode/* requests in flight (shutdown)
	paramsRequired bool // absent or null params are invalid

	// prepare runs on the read loop: it decodes the params and returns the
	// work to run.
	prepare func(s *server, raw json.RawMessage) (*call, error)
}

// A call is a decoded request, ready to run.
type call struct {
	queued bool          // runs in a session queue (see [session.Manager.Reserve])
	queue  string        // the session of that queue; "" for the workspace queue
	token  ProgressToken // the client's workDoneToken, nil for none
	// run runs the call: in ticket t's place in its queue (nil for a call
	// outside the queues), reporting progress to p.
	run func(ctx context.Context, t *session.Ticket, p session.Progress) (any, error)
}

// methodTable returns the methods of the protocol. It is built per server
// (the handlers refer to the server, and a package-level table would be an
// initialization cycle).
func (s *server) methodTable() map[string]method {
	return map[string]method{
		"initialize":  {inline: true, prepare: handler((*server).initialize, nil)},
		"initialized": {notification: true},
		"shutdown":    {drains: true, prepare: (*server).prepareShutdown},
		"exit":        {notification: true},

		"vtcode/openSession":     {prepare: handler((*server).openSession, func(p *session.OpenParams) string { return p.SessionID })},
		"vtcode/closeSession":    {paramsRequired: true, prepare: handler((*server).closeSession, (*sessionParams).queue)},
		"vtcode/listSessions":    {prepare: handler((*server).listSessions, workspaceQueue[session.ListParams])},
		"vtcode/appendMessages":  {paramsRequired: true, prepare: handler((*server).appendMessages, func(p *session.AppendParams) string { return p.SessionID })},
		"vtcode/history":         {paramsRequired: true, prepare: handler((*server).history, func(p *session.HistoryParams) string { return p.SessionID })},
		"vtcode/prepareRequest":  {paramsRequired: true, prepare: handler((*server).prepareRequestDelta, func(p *prepareDeltaParams) string { return p.SessionID })},
		"vtcode/recordResponse":  {paramsRequired: true, prepare: handler((*server).recordResponseUsage, func(p *recordParams) string { return p.SessionID })},
		"vtcode/compact":         {paramsRequired: true, prepare: handler((*server).compact, func(p *compactRequest) string { return p.SessionID })},
		"vtcode/projectionStats": {paramsRequired: true, prepare: handler((*server).projectionStats, (*sessionParams).queue)},
		"vtcode/setPolicy":       {paramsRequired: true, prepare: handler((*server).setPolicy, func(p *session.SetPolicyParams) string { return p.SessionID })},
		"vtcode/getPolicy":       {prepare: handler((*server).getPolicy, func(p *session.GetPolicyParams) string { return p.SessionID })},
		"vtcode/listArtifacts":   {paramsRequired: true, prepare: handler((*server).listArtifacts, (*sessionParams).queue)},
		"vtcode/restore":         {paramsRequired: true, prepare: handler((*server).restore, func(p *session.RestoreParams) string { return p.SessionID })},
		"vtcode/switchModel":     {paramsRequired: true, prepare: handler((*server).switchModel, func(p *SwitchModelParams) string { return p.SessionID })},
		"vtcode/compactPrompt":   {paramsRequired: true, prepare: handler((*server).compactPrompt, workspaceQueue[session.PromptParams])},
		"vtcode/contextMap":      {paramsRequired: true, prepare: handler((*server).contextMap, (*sessionParams).queue)},
		"vtcode/declineCompaction": {paramsRequired: true, prepare: handler((*server).declineCompaction,
			func(p *session.DeclineParams) string { return p.SessionID })},
	}
}

// Methods returns every vtcode/* request method, sorted.
func Methods() []string {
	var out []string
	for name := range (&server{}).methodTable() {
		if strings.HasPrefix(name, "vtcode/") {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Notifications returns the vtcode/* notifications the server sends,
// sorted.
func Notifications() []string {
	return []string{"vtcode/compactBoundary", "vtcode/compactionProposed", "vtcode/tokenPressure"}
}

// workDoneParams are params that carry a work-done token.
type workDoneParams interface {
	workDone() *WorkDoneProgressParams
}

// handler adapts a typed handler to the method table: it decodes params of
// type P and returns the call, in the session queue queue names (the
// session id of the params, "" for the workspace queue; a nil queue runs
// the call outside any queue), with the params' work-done token when they
// carry one.
func handler[P, R any](fn func(*server, context.Context, *P, *session.Ticket, session.Progress) (R, error), queue func(*P) string) func(*server, json.RawMessage) (*call, error) {
	return func(s *server, raw json.RawMessage) (*call, error) {
		p := new(P)
		if err := decodeParams(raw, p); err != nil {
			return nil, err
		}
		c := &call{run: func(ctx context.Context, t *session.Ticket, pr session.Progress) (any, error) {
			return fn(s, ctx, p, t, pr)
		}}
		if queue != nil {
			c.queued, c.queue = true, queue(p)
		}
		if w, ok := any(p).(workDoneParams); ok {
			if tok := w.workDone().WorkDoneToken; !isNull(tok) {
				if !validToken(tok) {
					return nil, &session.ParamError{Path: "workDoneToken", Msg: "must be a string or an integer"}
				}
				c.token = tok
			}
		}
		return c, nil
	}
}

// workspaceQueue is the queue of the methods that name no session.
func workspaceQueue[P any](*P) string { return "" }

// sessionParams are the params of the methods that take only a session.
type sessionParams struct {
	SessionID string `json:"sessionId"`
}

func (p *sessionParams) queue() string { return p.SessionID }

// initialize answers initialize: it adds the workspace folders with the
// client's initializationOptions and records its progress capability.
// Invalid initializationOptions fail the request (the client may retry);
// a folder that cannot be added is reported with window/showMessage.
func (s *server) initialize(_ context.Context, p *InitializeParams, _ *session.Ticket, _ session.Progress) (*InitializeResult, error) {
	var folders []string
	for _, f := range p.WorkspaceFolders {
		folders = append(folders, f.URI)
	}
	switch {
	case len(folders) > 0:
	case p.RootURI != nil && *p.RootURI != "":
		folders = []string{*p.RootURI}
	case p.RootPath != nil && *p.RootPath != "":
		folders = []string{*p.RootPath}
	}
	for _, f := range folders {
		err := s.mgr.AddWorkspace(f, p.InitializationOptions)
		var fe *config.FieldError
		switch {
		case errors.As(err, &fe):
			return nil, &session.ParamError{Path: "initializationOptions." + strings.TrimPrefix(fe.Path, "policy."), Msg: fe.Msg}
		case err != nil:
			s.showMessage(MessageWarning, fmt.Sprintf("Workspace folder %s was not added: %v", f, err))
		default:
			s.scope.add(f)
		}
	}
	s.progress.setSupported(p.Capabilities.Window != nil && p.Capabilities.Window.WorkDoneProgress)
	s.delta.enable(p.Capabilities.Experimental)
	s.mu.Lock()
	s.state = stateInitialized
	s.mu.Unlock()
	if s.opts.Attach != nil {
		s.opts.Attach(s.base, s.mgr, p.InitializationOptions)
	}
	if s.opts.InitNotice != nil {
		if text := s.opts.InitNotice(p.InitializationOptions); text != "" {
			s.showMessage(MessageWarning, text)
		}
	}
	version := s.opts.Version
	if version == "" {
		version = "devel"
	}
	return &InitializeResult{
		Capabilities: ServerCapabilities{Experimental: ExperimentalCapabilities{VTCode: VTCodeCapabilities{
			ProtocolVersion: ProtocolVersion,
			Methods:         Methods(),
			Notifications:   Notifications(),
			ProjectionDelta: true,
		}}},
		ServerInfo: ServerInfo{Name: "vtcode-ls", Version: version},
	}, nil
}

// prepareShutdown handles shutdown on the read loop: from here on requests
// are refused. The response waits for the vtcode/* requests in flight.
func (s *server) prepareShutdown(json.RawMessage) (*call, error) {
	s.mu.Lock()
	s.state = stateShutdown
	s.shutdownSeen = true
	s.mu.Unlock()
	return &call{run: func(context.Context, *session.Ticket, session.Progress) (any, error) {
		s.vtWork.Wait()
		return nil, nil
	}}, nil
}

func (s *server) openSession(ctx context.Context, p *session.OpenParams, t *session.Ticket, _ session.Progress) (*session.OpenResult, error) {
	if err := s.scopeOpen(ctx, p); err != nil {
		return nil, err
	}
	p.Ticket = t
	return s.mgr.OpenSession(ctx, *p)
}

func (s *server) closeSession(ctx context.Context, p *sessionParams, t *session.Ticket, _ session.Progress) (any, error) {
	s.delta.forget(p.SessionID)
	return nil, s.mgr.CloseSession(ctx, p.SessionID, t)
}

func (s *server) listSessions(ctx context.Context, p *session.ListParams, t *session.Ticket, _ session.Progress) ([]session.SessionInfo, error) {
	p.Ticket = t
	list, err := s.scopeList(ctx, *p)
	if list == nil && err == nil {
		list = []session.SessionInfo{}
	}
	return list, err
}

func (s *server) appendMessages(ctx context.Context, p *session.AppendParams, t *session.Ticket, _ session.Progress) (*session.AppendResult, error) {
	p.Ticket = t
	return s.mgr.AppendMessages(ctx, *p)
}

func (s *server) history(ctx context.Context, p *session.HistoryParams, t *session.Ticket, _ session.Progress) (*session.HistoryResult, error) {
	p.Ticket = t
	return s.mgr.History(ctx, *p)
}

func (s *server) projectionStats(ctx context.Context, p *sessionParams, t *session.Ticket, _ session.Progress) (*session.Stats, error) {
	return s.mgr.ProjectionStats(ctx, p.SessionID, t)
}

func (s *server) declineCompaction(ctx context.Context, p *session.DeclineParams, t *session.Ticket, _ session.Progress) (*session.Stats, error) {
	p.Ticket = t
	return s.mgr.DeclineCompaction(ctx, *p)
}

func (s *server) setPolicy(ctx context.Context, p *session.SetPolicyParams, t *session.Ticket, _ session.Progress) (*config.Policy, error) {
	if p.SessionID == "" {
		if err := s.scopeWorkspace(&p.Workspace); err != nil {
			return nil, err
		}
	}
	p.Ticket = t
	return s.mgr.SetPolicy(ctx, *p)
}

func (s *server) getPolicy(ctx context.Context, p *session.GetPolicyParams, t *session.Ticket, _ session.Progress) (*config.Policy, error) {
	if p.SessionID == "" {
		if err := s.scopeWorkspace(&p.Workspace); err != nil {
			return nil, err
		}
	}
	p.Ticket = t
	return s.mgr.GetPolicy(ctx, *p)
}

func (s *server) listArtifacts(ctx context.Context, p *sessionParams, t *session.Ticket, _ session.Progress) ([]session.ArtifactInfo, error) {
	list, err := s.mgr.ListArtifacts(ctx, p.SessionID, t)
	if list == nil && err == nil {
		list = []session.ArtifactInfo{}
	}
	return list, err
}

func (s *server) restore(ctx context.Context, p *session.RestoreParams, t *session.Ticket, _ session.Progress) (*session.RestoreResult, error) {
	p.Ticket = t
	return s.mgr.Restore(ctx, *p)
}

func (s *server) switchModel(ctx context.Context, p *SwitchModelParams, t *session.Ticket, pr session.Progress) (*session.SwitchResult, error) {
	p.Ticket = t
	return s.mgr.SwitchModel(ctx, p.SwitchParams, pr)
}

func (s *server) compactPrompt(ctx context.Context, p *session.PromptParams, t *session.Ticket, _ session.Progress) (*session.PromptResult, error) {
	if err := s.scopeWorkspace(&p.Workspace); err != nil {
		return nil, err
	}
	p.Ticket = t
	return s.mgr.CompactPrompt(ctx, *p)
}
