package rpc

import (
	"encoding/json"

	"github.com/vtcode/vtcode-ls/session"
)

// This file holds the few LSP 3.17 structures vtcode-ls speaks, written out
// by hand: the lifecycle, work-done progress, cancellation and window
// messages, and the vtcode/* params that carry more than the session's
// parameters (a work-done token). The other vtcode/* parameter and result
// shapes are the session package's structs, encoded as they are.

// ProtocolVersion is the version of the vtcode/* protocol this server
// speaks, advertised in capabilities.experimental.vtcode.protocolVersion.
const ProtocolVersion = 1

// Error codes beyond the JSON-RPC 2.0 ones, as the protocol defines them.
const (
	CodeServerNotInitialized = -32002 // LSP ServerNotInitialized
	CodeRequestCancelled     = -32800 // LSP RequestCancelled
	CodeRequestFailed        = -32803 // LSP RequestFailed: provider or compaction failure
	CodeUnknownSession       = -32001 // no open session has the id
	CodeSessionBusy          = -32004 // another process owns the session
)

// InitializeParams is the part of the LSP initialize params vtcode-ls reads.
type InitializeParams struct {
	ProcessID  *int        `json:"processId"`
	ClientInfo *ClientInfo `json:"clientInfo,omitempty"`
	// RootURI is the workspace root when WorkspaceFolders is empty.
	RootURI *string `json:"rootUri,omitempty"`
	// RootPath is the deprecated predecessor of RootURI.
	RootPath *string `json:"rootPath,omitempty"`
	// WorkspaceFolders are the workspaces; each becomes a session workspace.
	WorkspaceFolders []WorkspaceFolder `json:"workspaceFolders,omitempty"`
	// InitializationOptions is a partial policy, the shape of
	// vtcode/setPolicy's policy, applied to every workspace.
	InitializationOptions json.RawMessage    `json:"initializationOptions,omitempty"`
	Capabilities          ClientCapabilities `json:"capabilities"`
	Trace                 string             `json:"trace,omitempty"`
}

// ClientInfo names the client.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// WorkspaceFolder is an LSP workspace folder.
type WorkspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

// ClientCapabilities is the part of the client capabilities vtcode-ls reads.
type ClientCapabilities struct {
	Window *WindowClientCapabilities `json:"window,omitempty"`
}

// WindowClientCapabilities are the client's window capabilities.
type WindowClientCapabilities struct {
	// WorkDoneProgress reports whether the client accepts server-initiated
	// progress (window/workDoneProgress/create).
	WorkDoneProgress bool `json:"workDoneProgress,omitempty"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	Capabilities ServerCapabilities `json:"capabilities"`
	ServerInfo   ServerInfo         `json:"serverInfo"`
}

// ServerCapabilities are the server's capabilities: no standard LSP
// feature, and the vtcode protocol under experimental.
type ServerCapabilities struct {
	Experimental ExperimentalCapabilities `json:"experimental"`
}

// ExperimentalCapabilities holds the vtcode protocol description.
type ExperimentalCapabilities struct {
	VTCode VTCodeCapabilities `json:"vtcode"`
}

// VTCodeCapabilities describes the vtcode/* protocol the server speaks.
type VTCodeCapabilities struct {
	ProtocolVersion int `json:"protocolVersion"`
	// Methods lists every vtcode/* request method.
	Methods []string `json:"methods"`
	// Notifications lists every vtcode/* notification the server sends.
	Notifications []string `json:"notifications"`
}

// ServerInfo names the server.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// DidChangeWorkspaceFoldersParams are the params of
// workspace/didChangeWorkspaceFolders.
type DidChangeWorkspaceFoldersParams struct {
	Event struct {
		Added   []WorkspaceFolder `json:"added"`
		Removed []WorkspaceFolder `json:"removed"`
	} `json:"event"`
}

// A ProgressToken is an LSP progress token: a JSON string or integer, kept
// as its raw text.
type ProgressToken = json.RawMessage

// ProgressParams are the params of $/progress.
type ProgressParams struct {
	Token ProgressToken `json:"token"`
	// Value is a WorkDoneProgressBegin, WorkDoneProgressReport or
	// WorkDoneProgressEnd.
	Value any `json:"value"`
}

// WorkDoneProgressBegin starts a progress.
type WorkDoneProgressBegin struct {
	Kind        string `json:"kind"` // "begin"
	Title       string `json:"title"`
	Cancellable bool   `json:"cancellable"`
	Message     string `json:"message,omitempty"`
	Percentage  *int   `json:"percentage,omitempty"`
}

// WorkDoneProgressReport reports on a progress.
type WorkDoneProgressReport struct {
	Kind        string `json:"kind"` // "report"
	Cancellable bool   `json:"cancellable"`
	Message     string `json:"message,omitempty"`
	Percentage  *int   `json:"percentage,omitempty"`
}

// WorkDoneProgressEnd ends a progress.
type WorkDoneProgressEnd struct {
	Kind    string `json:"kind"` // "end"
	Message string `json:"message,omitempty"`
}

// WorkDoneProgressCreateParams are the params of
// window/workDoneProgress/create.
type WorkDoneProgressCreateParams struct {
	Token ProgressToken `json:"token"`
}

// WorkDoneProgressCancelParams are the params of
// window/workDoneProgress/cancel.
type WorkDoneProgressCancelParams struct {
	Token ProgressToken `json:"token"`
}

// CancelParams are the params of $/cancelRequest.
type CancelParams struct {
	ID json.RawMessage `json:"id"` // string or integer
}

// MessageType is the severity of window/logMessage and window/showMessage.
type MessageType int

// The message types of LSP.
const (
	MessageError   MessageType = 1
	MessageWarning MessageType = 2
	MessageInfo    MessageType = 3
	MessageLog     MessageType = 4
)

// LogMessageParams are the params of window/logMessage.
type LogMessageParams struct {
	Type    MessageType `json:"type"`
	Message string      `json:"message"`
}

// ShowMessageParams are the params of window/showMessage.
type ShowMessageParams struct {
	Type    MessageType `json:"type"`
	Message string      `json:"message"`
}

// WorkDoneProgressParams carry the client's work-done token of a request
// (LSP WorkDoneProgressParams): a string or an integer, nil for none.
type WorkDoneProgressParams struct {
	WorkDoneToken ProgressToken `json:"workDoneToken,omitempty"`
}

func (p *WorkDoneProgressParams) workDone() *WorkDoneProgressParams { return p }

// PrepareRequestParams are the params of vtcode/prepareRequest on the wire:
// the session's parameters and the progress token of an automatic
// compaction.
type PrepareRequestParams struct {
	session.PrepareParams
	WorkDoneProgressParams
}

// CompactParams are the params of vtcode/compact on the wire.
type CompactParams struct {
	session.CompactParams
	WorkDoneProgressParams
}

// SwitchModelParams are the params of vtcode/switchModel on the wire.
type SwitchModelParams struct {
	session.SwitchParams
	WorkDoneProgressParams
}
