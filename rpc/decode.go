package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/session"
)

// decodeParams decodes a request's params into p. Absent or null params
// leave p at its zero value; methods whose params are required say so in
// the method table. Unknown fields are ignored, so that newer clients can
// talk to older servers. A decoding failure is a *session.ParamError whose
// path names the offending field, e.g. "messages[3].role".
func decodeParams(raw json.RawMessage, p any) error {
	if isNull(raw) {
		return nil
	}
	err := json.Unmarshal(raw, p)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return &session.ParamError{Path: "params", Msg: "must be an object"}
		}
		path := pathAt(raw, te.Offset)
		if path == "" {
			path = te.Field
		}
		return &session.ParamError{Path: path, Msg: "must be " + jsonKind(te.Type)}
	}
	return locate(raw, err)
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a valid value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "a valid " + t.String()
}

// locate turns an error from the message decoder into a ParamError with the
// full path. A *history.FieldError names the field inside its message; the
// message's index is found by decoding the messages of params one at a
// time.
func locate(raw json.RawMessage, err error) error {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) == nil {
		if msgs, ok := fields["messages"]; ok {
			var elems []json.RawMessage
			if json.Unmarshal(msgs, &elems) == nil {
				for i, e := range elems {
					var m history.Message
					if err := json.Unmarshal(e, &m); err != nil {
						return relative("messages["+strconv.Itoa(i)+"]", err)
					}
				}
			}
		}
		if msg, ok := fields["message"]; ok {
			var m history.Message
			if err := json.Unmarshal(msg, &m); err != nil {
				return relative("message", err)
			}
		}
	}
	return &session.ParamError{Path: "params", Msg: bound(err.Error())}
}

// relative turns a decoding error of the message at path prefix into a
// ParamError with the full path.
func relative(prefix string, err error) error {
	var fe *history.FieldError
	if !errors.As(err, &fe) {
		return &session.ParamError{Path: prefix, Msg: bound(err.Error())}
	}
	path := prefix
	switch {
	case fe.Path == "":
	case strings.HasPrefix(fe.Path, "["):
		path += fe.Path
	default:
		path += "." + fe.Path
	}
	return &session.ParamError{Path: path, Msg: bound(fe.Msg)}
}

// pathAt returns the path ("messages[3].role") of the JSON value that ends
// at byte offset off of raw, or "" when it cannot be determined.
func pathAt(raw json.RawMessage, off int64) string {
	type frame struct {
		array bool
		key   string
		index int
		isKey bool // an object frame expects a key next
	}
	path := func(stack []frame) string {
		var b strings.Builder
		for _, f := range stack {
			switch {
			case f.array:
				b.WriteString("[" + strconv.Itoa(f.index) + "]")
			case f.key != "":
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			}
		}
		return b.String()
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		top := len(stack) - 1
		// A string token in key position names the next value.
		if s, ok := tok.(string); ok && top >= 0 && !stack[top].array && stack[top].isKey {
			stack[top].key, stack[top].isKey = s, false
			continue
		}
		// tok starts or is a value: count it in its container.
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:top]
			if top > 0 {
				stack[top-1].isKey = !stack[top-1].array
			}
			if dec.InputOffset() >= off {
				return path(stack)
			}
			continue
		}
		if top >= 0 && stack[top].array {
			stack[top].index++
		}
		if d, ok := tok.(json.Delim); ok {
			if dec.InputOffset() >= off {
				return path(stack)
			}
			stack = append(stack, frame{array: d == '[', index: -1, isKey: d == '{'})
			continue
		}
		if dec.InputOffset() >= off {
			return path(stack)
		}
		if top >= 0 && !stack[top].array {
			stack[top].isKey = true
		}
	}
}
