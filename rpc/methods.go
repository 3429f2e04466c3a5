package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
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
	snapshot       bool // may skip its lane while the session compacts (projectionStats)
	paramsRequired bool // absent or null params are invalid

	// prepare runs on the read loop: it decodes the params and returns the
	// work to run.
	prepare func(s *server, raw json.RawMessage) (*call, error)
}

// A call is a decoded request, ready to run.
type call struct {
	lane  string        // ordering lane; "" for none
	token ProgressToken // the client's workDoneToken, nil for none
	run   func(ctx context.Context, p session.Progress) (any, error)
}

// methodTable returns the methods of the protocol. It is built per server
// (the handlers refer to the server, and a package-level table would be an
// initialization cycle).
func (s *server) methodTable() map[string]method {
	return map[string]method{
		"initialize":  {inline: true, prepare: handler((*server).initialize)},
		"initialized": {notification: true},
		"shutdown":    {drains: true, prepare: (*server).prepareShutdown},
		"exit":        {notification: true},

		"vtcode/openSession":     {prepare: handler((*server).openSession)},
		"vtcode/closeSession":    {paramsRequired: true, prepare: handler((*server).closeSession)},
		"vtcode/listSessions":    {prepare: handler((*server).listSessions)},
		"vtcode/appendMessages":  {paramsRequired: true, prepare: handler((*server).appendMessages)},
		"vtcode/history":         {paramsRequired: true, prepare: handler((*server).history)},
		"vtcode/prepareRequest":  {paramsRequired: true, prepare: handler((*server).prepareRequest)},
		"vtcode/recordResponse":  {paramsRequired: true, prepare: handler((*server).recordResponse)},
		"vtcode/compact":         {paramsRequired: true, prepare: handler((*server).compact)},
		"vtcode/projectionStats": {paramsRequired: true, snapshot: true, prepare: handler((*server).projectionStats)},
		"vtcode/setPolicy":       {paramsRequired: true, prepare: handler((*server).setPolicy)},
		"vtcode/getPolicy":       {prepare: handler((*server).getPolicy)},
		"vtcode/listArtifacts":   {paramsRequired: true, prepare: handler((*server).listArtifacts)},
		"vtcode/restore":         {paramsRequired: true, prepare: handler((*server).restore)},
		"vtcode/switchModel":     {paramsRequired: true, prepare: handler((*server).switchModel)},
		"vtcode/compactPrompt":   {paramsRequired: true, prepare: handler((*server).compactPrompt)},
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
	return []string{"vtcode/compactBoundary", "vtcode/tokenPressure"}
}

// handler adapts a typed handler to the method table: it decodes params of
// type P, finds the request's lane (its sessionId) and progress token
// (its workDoneToken), and returns the call.
func handler[P, R any](fn func(*server, context.Context, *P, session.Progress) (R, error)) func(*server, json.RawMessage) (*call, error) {
	return func(s *server, raw json.RawMessage) (*call, error) {
		p := new(P)
		if err := decodeParams(raw, p); err != nil {
			return nil, err
		}
		lane, token, err := routing(p)
		if err != nil {
			return nil, err
		}
		return &call{lane: lane, token: token, run: func(ctx context.Context, pr session.Progress) (any, error) {
			return fn(s, ctx, p, pr)
		}}, nil
	}
}

// routing returns the lane and the client progress token of decoded
// params: the lane of the session named by a SessionID field (the
// workspace lane when there is none), and a WorkDoneToken field.
func routing(p any) (lane string, token ProgressToken, err error) {
	lane = "workspace"
	v := reflect.ValueOf(p).Elem()
	if v.Kind() != reflect.Struct {
		return lane, nil, nil
	}
	if f := v.FieldByName("SessionID"); f.IsValid() && f.Kind() == reflect.String && f.String() != "" {
		lane = "session:" + f.String()
	}
	if f := v.FieldByName("WorkDoneToken"); f.IsValid() {
		if raw, ok := f.Interface().(json.RawMessage); ok && !isNull(raw) {
			if !validToken(raw) {
				return "", nil, &session.ParamError{Path: "workDoneToken", Msg: "must be a string or an integer"}
			}
			token = raw
		}
	}
	return lane, token, nil
}

// sessionParams are the params of the methods that take only a session.
type sessionParams struct {
	SessionID string `json:"sessionId"`
}

// initialize answers initialize: it adds the workspace folders with the
// client's initializationOptions and records its progress capability.
// Invalid initializationOptions fail the request (the client may retry);
// a folder that cannot be added is reported with window/showMessage.
func (s *server) initialize(_ context.Context, p *InitializeParams, _ session.Progress) (*InitializeResult, error) {
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
		}
	}
	s.progress.setSupported(p.Capabilities.Window != nil && p.Capabilities.Window.WorkDoneProgress)
	s.mu.Lock()
	s.state = stateInitialized
	s.mu.Unlock()
	if s.opts.Attach != nil {
		s.opts.Attach(s.base, s.mgr, p.InitializationOptions)
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
	return &call{run: func(context.Context, session.Progress) (any, error) {
		s.vtWork.Wait()
		return nil, nil
	}}, nil
}

func (s *server) openSession(ctx context.Context, p *session.OpenParams, _ session.Progress) (*session.OpenResult, error) {
	return s.mgr.OpenSession(ctx, *p)
}

func (s *server) closeSession(ctx context.Context, p *sessionParams, _ session.Progress) (any, error) {
	return nil, s.mgr.CloseSession(ctx, p.SessionID)
}

func (s *server) listSessions(ctx context.Context, p *session.ListParams, _ session.Progress) ([]session.SessionInfo, error) {
	list, err := s.mgr.ListSessions(ctx, *p)
	if list == nil && err == nil {
		list = []session.SessionInfo{}
	}
	return list, err
}

func (s *server) appendMessages(ctx context.Context, p *session.AppendParams, _ session.Progress) (*session.AppendResult, error) {
	return s.mgr.AppendMessages(ctx, *p)
}

func (s *server) history(ctx context.Context, p *session.HistoryParams, _ session.Progress) (*session.HistoryResult, error) {
	return s.mgr.History(ctx, *p)
}

func (s *server) prepareRequest(ctx context.Context, p *session.PrepareParams, pr session.Progress) (*session.PrepareResult, error) {
	return s.mgr.PrepareRequest(ctx, *p, pr)
}

func (s *server) recordResponse(ctx context.Context, p *session.RecordParams, _ session.Progress) (*session.RecordResult, error) {
	return s.mgr.RecordResponse(ctx, *p)
}

func (s *server) compact(ctx context.Context, p *session.CompactParams, pr session.Progress) (*session.CompactResult, error) {
	return s.mgr.Compact(ctx, *p, pr)
}

func (s *server) projectionStats(ctx context.Context, p *sessionParams, _ session.Progress) (*session.Stats, error) {
	return s.mgr.ProjectionStats(ctx, p.SessionID)
}

func (s *server) setPolicy(ctx context.Context, p *session.SetPolicyParams, _ session.Progress) (*config.Policy, error) {
	return s.mgr.SetPolicy(ctx, *p)
}

func (s *server) getPolicy(ctx context.Context, p *session.GetPolicyParams, _ session.Progress) (*config.Policy, error) {
	return s.mgr.GetPolicy(ctx, *p)
}

func (s *server) listArtifacts(ctx context.Context, p *sessionParams, _ session.Progress) ([]session.ArtifactInfo, error) {
	list, err := s.mgr.ListArtifacts(ctx, p.SessionID)
	if list == nil && err == nil {
		list = []session.ArtifactInfo{}
	}
	return list, err
}

func (s *server) restore(ctx context.Context, p *session.RestoreParams, _ session.Progress) (*session.RestoreResult, error) {
	return s.mgr.Restore(ctx, *p)
}

func (s *server) switchModel(ctx context.Context, p *session.SwitchParams, pr session.Progress) (*session.SwitchResult, error) {
	return s.mgr.SwitchModel(ctx, *p, pr)
}

func (s *server) compactPrompt(ctx context.Context, p *session.PromptParams, _ session.Progress) (*session.PromptResult, error) {
	return s.mgr.CompactPrompt(ctx, *p)
}
