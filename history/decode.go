package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// A FieldError reports a part of a message that does not decode. Path names
// it relative to the message, in the wire form: "role", "content[1]",
// "toolCalls[3].name"; it is empty when the message itself is not an object.
type FieldError struct {
	Path string
	Msg  string
}

func (e *FieldError) Error() string {
	if e.Path == "" {
		return "message: " + e.Msg
	}
	return e.Path + ": " + e.Msg
}

// fieldErr returns a FieldError at path.
func fieldErr(path, msg string) error { return &FieldError{Path: path, Msg: msg} }

// under prefixes the path of a FieldError with prefix (a field name, or an
// index "[3]").
func under(prefix string, err error) error {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return &FieldError{Path: prefix, Msg: err.Error()}
	}
	p := prefix
	switch {
	case fe.Path == "":
	case fe.Path[0] == '[':
		p += fe.Path
	default:
		p += "." + fe.Path
	}
	return &FieldError{Path: p, Msg: fe.Msg}
}

// The decoders of this file read the top-level fields of an object by
// scanning it once, without building a map or decoding a value twice, so
// that decoding costs a small constant per byte: a message with a million
// tool calls decodes in linear time. json.Unmarshal has checked the whole
// input before it calls an UnmarshalJSON method; on input that is not valid
// JSON (a direct call) the scanner reports an error instead.

// errSyntax reports input the scanner cannot read.
var errSyntax = errors.New("invalid JSON")

// A field is one member of a JSON object: its key and the raw value.
type field struct {
	key string
	val []byte
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
//
// It searches quotes with bytes.IndexByte (vectorized): a quote ends the
// string unless an odd run of backslashes precedes it (each backslash pair
// is an escaped backslash; a run starts fresh after any other byte). The
// backslashes themselves, dense in code and file contents (every \n), are
// not searched one by one: every byte is searched once, and only the bytes
// right before a quote are looked at again.
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, errSyntax
		}
		q := j + k
		p := q - 1
		for p > i && b[p] == '\\' {
			p--
		}
		if (q-1-p)%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

// ValueEnd returns the index after the JSON value starting at b[i]:
// strings and nesting are followed, scalars run to the next delimiter. It
// finds structure only; the value is not validated. Callers that split a
// body into its members (the proxy's structure scan) use it too.
func ValueEnd(b []byte, i int) (int, error) { return skipValue(b, i) }

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch b[i] {
	case '"':
		end, err := skipString(b, i)
		return end, err
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errSyntax
	}
	j := i
	for j < len(b) && !isSpace(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	if j == i {
		return 0, errSyntax
	}
	return j, nil
}

// objectFields returns the members of the object b, in order; ok is false
// when b is not an object (null, an array, a number...).
func objectFields(b []byte) (fields []field, ok bool, err error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false, nil
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil, true, trailing(b, i+1)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, true, errSyntax
		}
		end, err := skipString(b, i)
		if err != nil {
			return nil, true, err
		}
		key, ok := decodeString(b[i:end])
		if !ok {
			return nil, true, errSyntax
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, true, errSyntax
		}
		i = skipSpace(b, i+1)
		vend, err := skipValue(b, i)
		if err != nil {
			return nil, true, err
		}
		fields = append(fields, field{key: key, val: b[i:vend]})
		i = skipSpace(b, vend)
		if i >= len(b) {
			return nil, true, errSyntax
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return fields, true, trailing(b, i+1)
		default:
			return nil, true, errSyntax
		}
	}
}

// arrayElems returns the elements of the array b; ok is false when b is not
// an array.
func arrayElems(b []byte) (elems [][]byte, ok bool, err error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false, nil
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return [][]byte{}, true, trailing(b, i+1)
	}
	for {
		end, err := skipValue(b, i)
		if err != nil {
			return nil, true, err
		}
		elems = append(elems, b[i:end])
		i = skipSpace(b, end)
		if i >= len(b) {
			return nil, true, errSyntax
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return elems, true, trailing(b, i+1)
		default:
			return nil, true, errSyntax
		}
	}
}

func trailing(b []byte, i int) error {
	if skipSpace(b, i) != len(b) {
		return errSyntax
	}
	return nil
}

// decodeString decodes a JSON string value; ok is false when v is not a
// string. A string without escapes and in valid UTF-8 is taken as is.
func decodeString(v []byte) (s string, ok bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		for _, c := range inner {
			if c < 0x20 {
				return "", false // a control character: not valid JSON
			}
		}
		return string(inner), true
	}
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

func isNullValue(v []byte) bool { return string(v) == "null" }

// stringField decodes the string member v at path into *p; null is "".
func stringField(path string, v []byte, p *string) error {
	if isNullValue(v) {
		*p = ""
		return nil
	}
	s, ok := decodeString(v)
	if !ok {
		return fieldErr(path, "must be a string")
	}
	*p = s
	return nil
}

// decodeMessage decodes the protocol form of a message.
func decodeMessage(data []byte) (Message, error) {
	fields, isObject, err := objectFields(data)
	switch {
	case err != nil:
		return Message{}, err
	case !isObject:
		return Message{}, fieldErr("", "must be an object")
	}
	var out Message
	var role string
	for _, f := range fields {
		var err error
		switch f.key {
		case "id":
			err = stringField("id", f.val, &out.ID)
		case "role":
			err = stringField("role", f.val, &role)
		case "content":
			var c Content
			if err = c.decode(f.val); err == nil {
				out.Content = c
			} else {
				err = under("content", err)
			}
		case "toolCalls":
			out.ToolCalls, err = decodeToolCalls(f.val)
		case "toolCallId":
			err = stringField("toolCallId", f.val, &out.ToolCallID)
		case "toolName":
			err = stringField("toolName", f.val, &out.ToolName)
		case "reasoning":
			err = stringField("reasoning", f.val, &out.Reasoning)
		case "reasoningDetails":
			out.ReasoningDetails, err = decodeRawArray(f.val)
		default:
			if out.Extra == nil {
				out.Extra = map[string]json.RawMessage{}
			}
			out.Extra[f.key] = compactRaw(f.val)
		}
		if err != nil {
			return Message{}, err
		}
	}
	out.Role = Role(role)
	if !out.Role.Valid() {
		return Message{}, fieldErr("role", "must be system, user, assistant or tool, got "+strconv.Quote(role))
	}
	return out, nil
}

func decodeToolCalls(v []byte) ([]ToolCall, error) {
	if isNullValue(v) {
		return nil, nil
	}
	elems, isArray, err := arrayElems(v)
	switch {
	case err != nil:
		return nil, err
	case !isArray:
		return nil, fieldErr("toolCalls", "must be an array")
	}
	calls := make([]ToolCall, len(elems))
	for i, e := range elems {
		if err := calls[i].decode(e); err != nil {
			return nil, under("toolCalls["+strconv.Itoa(i)+"]", err)
		}
	}
	return calls, nil
}

func decodeRawArray(v []byte) ([]json.RawMessage, error) {
	if isNullValue(v) {
		return nil, nil
	}
	elems, isArray, err := arrayElems(v)
	switch {
	case err != nil:
		return nil, err
	case !isArray:
		return nil, fieldErr("reasoningDetails", "must be an array")
	}
	out := make([]json.RawMessage, len(elems))
	for i, e := range elems {
		out[i] = compactRaw(e)
	}
	return out, nil
}

// decode decodes a tool call object.
func (tc *ToolCall) decode(data []byte) error {
	fields, isObject, err := objectFields(data)
	switch {
	case err != nil:
		return err
	case !isObject:
		return fieldErr("", "must be an object")
	}
	var out ToolCall
	for _, f := range fields {
		var err error
		switch f.key {
		case "id":
			err = stringField("id", f.val, &out.ID)
		case "name":
			err = stringField("name", f.val, &out.Name)
		case "arguments":
			err = stringField("arguments", f.val, &out.Arguments)
		case "input":
			err = stringField("input", f.val, &out.Input)
		case "thoughtSignature":
			err = stringField("thoughtSignature", f.val, &out.ThoughtSignature)
		default:
			if out.Extra == nil {
				out.Extra = map[string]json.RawMessage{}
			}
			out.Extra[f.key] = compactRaw(f.val)
		}
		if err != nil {
			return err
		}
	}
	*tc = out
	return nil
}

// decode decodes content: null, a string or a list of parts.
func (c *Content) decode(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case len(data) == 0:
		return fieldErr("", "empty")
	case isNullValue(data):
		*c = Content{kind: contentNull}
	case data[0] == '"':
		s, ok := decodeString(data)
		if !ok {
			return errSyntax
		}
		*c = Text(s)
	case data[0] == '[':
		elems, _, err := arrayElems(data)
		if err != nil {
			return err
		}
		parts := make([]Part, len(elems))
		for i, e := range elems {
			if err := parts[i].decode(e); err != nil {
				return under("["+strconv.Itoa(i)+"]", err)
			}
		}
		*c = Parts(parts...)
	default:
		return fieldErr("", "must be a string, an array of parts or null")
	}
	return nil
}

// decode decodes a part object. Any object is accepted: only a part that is
// exactly {"type":"text","text":<string>} becomes a plain text part; every
// other object is kept verbatim in Raw, with Type and Text filled in when
// they are strings.
func (p *Part) decode(data []byte) error {
	fields, isObject, err := objectFields(data)
	switch {
	case err != nil:
		return err
	case !isObject:
		return fieldErr("", "part must be an object")
	}
	var out Part
	typeOK, textOK, other := false, false, false
	for _, f := range fields {
		switch f.key {
		case "type":
			out.Type, typeOK = decodeString(f.val)
		case "text":
			out.Text, textOK = decodeString(f.val)
		default:
			other = true
		}
	}
	if !(typeOK && textOK && out.Type == "text" && !other) {
		out.Raw = compactRaw(data)
	}
	*p = out
	return nil
}
