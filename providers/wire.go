package providers

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// Tool is a function tool schema in neutral form, for clients that translate
// tool schemas between wire formats.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON schema; nil when absent
	// Strict is the schema's strict flag when the tool sets one (chat form
	// function.strict, Responses and Anthropic form strict), nil otherwise.
	// The wire formats default differently: a Responses function tool
	// without strict is strict, a chat-completions one is not.
	Strict *bool
}

// ParseTool recognizes a function tool schema in chat-completions form
// ({"type":"function","function":{"name",...,"parameters"}}), Responses form
// ({"type":"function","name",...,"parameters"}) or Anthropic form
// ({"name",...,"input_schema"}) and reports which form it was in. ok is false
// for every other shape (built-in tools such as web_search), which clients
// pass through verbatim.
func ParseTool(raw json.RawMessage) (t Tool, form Wire, ok bool) {
	var v struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		InputSchema json.RawMessage `json:"input_schema"`
		Strict      *bool           `json:"strict"`
		Function    *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      *bool           `json:"strict"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return Tool{}, "", false
	}
	switch {
	case v.Type == "function" && v.Function != nil && v.Function.Name != "":
		return Tool{v.Function.Name, v.Function.Description, v.Function.Parameters, v.Function.Strict}, WireChat, true
	case v.Type == "function" && v.Name != "":
		return Tool{v.Name, v.Description, v.Parameters, v.Strict}, WireResponses, true
	case (v.Type == "" || v.Type == "custom") && v.Name != "" && v.InputSchema != nil:
		return Tool{v.Name, v.Description, v.InputSchema, v.Strict}, WireAnthropic, true
	}
	return Tool{}, "", false
}

// Compaction is what a reasoningDetails entry is as the result of a native
// compaction: [CompactionOf] answers it, the one place that does.
type Compaction int

const (
	// NotCompaction: any other entry (thinking, reasoning, not an object).
	NotCompaction Compaction = iota
	// OpenAICompaction: an opaque Responses compaction item, type
	// "compaction" with encrypted_content and no content field, or
	// "compaction_summary".
	OpenAICompaction
	// AnthropicCompaction: an Anthropic compaction block
	// ({"type":"compaction","content":…}) with its content.
	AnthropicCompaction
	// FailedCompaction: an Anthropic compaction block whose content is
	// null, a failed compaction that the API treats as a no-op.
	FailedCompaction
)

// CompactionOf says whether a reasoningDetails entry is the opaque result of
// a native compaction, and which: the same answer for the object and for a
// JSON string holding it (as [DetailObject] unwraps).
func CompactionOf(raw json.RawMessage) Compaction {
	if !bytes.Contains(raw, []byte("compaction")) {
		return NotCompaction // the common case, without parsing
	}
	obj, typ, ok := DetailObject(raw)
	switch {
	case !ok:
		return NotCompaction
	case typ == "compaction_summary":
		return OpenAICompaction
	case typ != "compaction":
		return NotCompaction
	}
	var v map[string]json.RawMessage
	if json.Unmarshal(obj, &v) != nil {
		return NotCompaction
	}
	content, has := v["content"]
	switch c := strings.TrimSpace(string(content)); {
	case !has:
		return OpenAICompaction
	case c == "" || c == "null":
		return FailedCompaction
	}
	return AnthropicCompaction
}

// DetailObject returns a reasoningDetails entry as a compact JSON object with
// its "type" field. Entries stored as a JSON string holding an object are
// unwrapped. ok is false for anything that is not an object.
func DetailObject(raw json.RawMessage) (obj json.RawMessage, typ string, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, "", false
		}
		raw = bytes.TrimSpace([]byte(s))
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, "", false
	}
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &head) != nil {
		return nil, "", false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return nil, "", false
	}
	return buf.Bytes(), head.Type, true
}

// CompactJSON returns raw without insignificant white space, or raw itself
// when it does not parse.
func CompactJSON(raw []byte) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return buf.Bytes()
}

// ImageURL returns the URL, or a data: URL, of an image content part in any
// of the shapes the wire formats use: chat completions
// ({"type":"image_url","image_url":{"url"}}), Responses
// ({"type":"input_image","image_url"}), Anthropic ({"type":"image",
// "source":{"type":"base64"|"url",...}}) and VT Code ({"type":"image",
// "data","mime_type"}). ok is false for every other part.
func ImageURL(p history.Part) (url string, ok bool) {
	if p.Raw == nil {
		return "", false
	}
	var v struct {
		ImageURL json.RawMessage `json:"image_url"`
		Data     string          `json:"data"`
		MimeType string          `json:"mime_type"`
		Source   *struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
			URL       string `json:"url"`
		} `json:"source"`
	}
	if json.Unmarshal(p.Raw, &v) != nil {
		return "", false
	}
	switch p.Type {
	case "image_url", "input_image", "image":
		var s string
		if json.Unmarshal(v.ImageURL, &s) == nil && s != "" {
			return s, true
		}
		var obj struct {
			URL string `json:"url"`
		}
		if json.Unmarshal(v.ImageURL, &obj) == nil && obj.URL != "" {
			return obj.URL, true
		}
	}
	if p.Type != "image" {
		return "", false
	}
	switch {
	case v.Data != "":
		mt := v.MimeType
		if mt == "" {
			mt = "image/png"
		}
		return "data:" + mt + ";base64," + v.Data, true
	case v.Source != nil && v.Source.Type == "base64" && v.Source.Data != "":
		return "data:" + v.Source.MediaType + ";base64," + v.Source.Data, true
	case v.Source != nil && v.Source.URL != "":
		return v.Source.URL, true
	}
	return "", false
}
