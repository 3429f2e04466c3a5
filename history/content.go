package history

import (
	"encoding/json"
	"strings"
)

type contentKind uint8

const (
	contentAbsent contentKind = iota // no content field
	contentNull                      // "content": null
	contentString                    // "content": "..."
	contentParts                     // "content": [...]
)

// Content is a message's content: absent, null, a string, or a list of parts.
// The zero value is absent content.
type Content struct {
	kind  contentKind
	text  string
	parts []Part
}

// Part is one element of a content list. Text parts carry Text; every other part
// (images, files, provider objects) is kept verbatim in Raw, as is a text part
// that has fields besides type and text.
type Part struct {
	Type string
	Text string          // for type "text"
	Raw  json.RawMessage // the verbatim object, for every part that is not a plain text part
}

// Text returns string content.
func Text(s string) Content { return Content{kind: contentString, text: s} }

// Parts returns list content.
func Parts(parts ...Part) Content {
	if parts == nil {
		parts = []Part{}
	}
	return Content{kind: contentParts, parts: parts}
}

// TextPart returns a plain text part.
func TextPart(s string) Part { return Part{Type: "text", Text: s} }

// IsAbsent reports whether the message had no content field.
func (c Content) IsAbsent() bool { return c.kind == contentAbsent }

// IsString reports whether the content is a plain string.
func (c Content) IsString() bool { return c.kind == contentString }

// PartList returns the parts of list content, or nil. Callers must not modify it.
func (c Content) PartList() []Part {
	if c.kind != contentParts {
		return nil
	}
	return c.parts
}

// Text returns the string content, or the text parts concatenated.
func (c Content) Text() string {
	switch c.kind {
	case contentString:
		return c.text
	case contentParts:
		if len(c.parts) == 1 {
			return c.parts[0].Text
		}
		var sb strings.Builder
		for _, p := range c.parts {
			sb.WriteString(p.Text)
		}
		return sb.String()
	}
	return ""
}

// IsMedia reports whether the part is an image or a file, which count a flat
// 1,000 tokens.
func (p Part) IsMedia() bool {
	switch p.Type {
	case "image", "image_url", "input_image", "file", "input_file", "document":
		return true
	}
	return false
}

func (c Content) approxLen() int {
	switch c.kind {
	case contentString:
		return len(c.text) + 8
	case contentParts:
		n := 2
		for _, p := range c.parts {
			n += len(p.Text) + len(p.Raw) + 24
		}
		return n
	}
	return 0
}

// MarshalJSON writes the content as null, a string or a list of parts.
func (c Content) MarshalJSON() ([]byte, error) { return c.appendJSON(nil), nil }

func (c Content) appendJSON(b []byte) []byte {
	switch c.kind {
	case contentString:
		return appendString(b, c.text)
	case contentParts:
		b = append(b, '[')
		for i, p := range c.parts {
			if i > 0 {
				b = append(b, ',')
			}
			b = p.appendJSON(b)
		}
		return append(b, ']')
	}
	return append(b, "null"...)
}

func (p Part) appendJSON(b []byte) []byte {
	if p.Raw != nil {
		return append(b, p.Raw...)
	}
	b = append(b, `{"type":`...)
	b = appendString(b, p.Type)
	b = append(b, `,"text":`...)
	b = appendString(b, p.Text)
	return append(b, '}')
}

// MarshalJSON writes the part.
func (p Part) MarshalJSON() ([]byte, error) { return p.appendJSON(nil), nil }

// UnmarshalJSON decodes null, a string or a list of part objects; a part
// that is not an object is a *FieldError.
func (c *Content) UnmarshalJSON(data []byte) error { return c.decode(data) }

// UnmarshalJSON decodes a part object (see [Part.decode]).
func (p *Part) UnmarshalJSON(data []byte) error { return p.decode(data) }
