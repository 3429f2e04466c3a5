package providers

import (
	"container/list"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/vtcode/vtcode-ls/history"
)

// Members splits a JSON object body into its members in one pass, and
// finds the exact spans of the elements of the array member arrayKey. The
// members' values are slices of body (not validated: decode them with
// json.Unmarshal); array is the zero Span when arrayKey is absent. A member
// name that appears twice is an error: what the engine sees must be what the
// API sees (which takes the last), never a merge. It is the structure scan
// of a proxy, which decodes only what it has not seen.
func Members(body []byte, arrayKey string) (members map[string]json.RawMessage, array Span, elems []Span, err error) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, Span{}, nil, errors.New("request body: must be a JSON object")
	}
	members = map[string]json.RawMessage{}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return members, Span{}, nil, nil
	}
	for {
		if i >= len(body) || body[i] != '"' {
			return nil, Span{}, nil, fmt.Errorf("request body: a member name expected at byte %d", i)
		}
		kend, err := scanValue(body, i)
		if err != nil {
			return nil, Span{}, nil, err
		}
		var key string
		if err := json.Unmarshal(body[i:kend], &key); err != nil {
			return nil, Span{}, nil, fmt.Errorf("request body: member name at byte %d: %w", i, err)
		}
		if _, dup := members[key]; dup {
			// The APIs take the last of duplicate members; the engine would
			// have to guess which. The request is forwarded as it came.
			return nil, Span{}, nil, fmt.Errorf("request body: member %q appears twice", Bound(key, 40))
		}
		i = skipSpace(body, kend)
		if i >= len(body) || body[i] != ':' {
			return nil, Span{}, nil, fmt.Errorf("request body: ':' expected at byte %d", i)
		}
		i = skipSpace(body, i+1)
		vstart := i
		if key == arrayKey && i < len(body) && body[i] == '[' {
			j := skipSpace(body, i+1)
			if j < len(body) && body[j] == ']' {
				i = j + 1
			} else {
				for {
					end, err := scanValue(body, j)
					if err != nil {
						return nil, Span{}, nil, err
					}
					elems = append(elems, Span{j, end})
					j = skipSpace(body, end)
					if j < len(body) && body[j] == ',' {
						j = skipSpace(body, j+1)
						continue
					}
					if j < len(body) && body[j] == ']' {
						i = j + 1
						break
					}
					return nil, Span{}, nil, fmt.Errorf("request body: ',' or ']' expected at byte %d", j)
				}
			}
			array = Span{vstart, i}
		} else {
			end, err := scanValue(body, i)
			if err != nil {
				return nil, Span{}, nil, err
			}
			i = end
		}
		members[key] = json.RawMessage(body[vstart:i])
		i = skipSpace(body, i)
		if i < len(body) && body[i] == ',' {
			i = skipSpace(body, i+1)
			continue
		}
		if i < len(body) && body[i] == '}' {
			if rest := skipSpace(body, i+1); rest != len(body) {
				return nil, Span{}, nil, fmt.Errorf("request body: data after the object at byte %d", rest)
			}
			return members, array, elems, nil
		}
		return nil, Span{}, nil, fmt.Errorf("request body: ',' or '}' expected at byte %d", i)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanValue returns the end of the JSON value starting at b[i]
// ([history.ValueEnd]), with the byte it started at in the error.
func scanValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errors.New("request body: value expected at the end")
	}
	end, err := history.ValueEnd(b, i)
	if err != nil {
		return 0, fmt.Errorf("request body: malformed value at byte %d", i)
	}
	return end, nil
}

// DecodeCache remembers decoded conversation elements by the digest of
// their bytes, so that a proxy decodes each message of a conversation once
// although the agent sends it with every request. It holds at most max
// bytes of elements (least recently used dropped first) and is safe for
// concurrent use. Values must not be modified by their users.
type DecodeCache struct {
	mu   sync.Mutex
	max  int
	size int
	lru  *list.List // of *cacheEntry, most recent first
	m    map[[32]byte]*list.Element
}

type cacheEntry struct {
	key  [32]byte
	size int
	v    any
}

// NewDecodeCache returns a cache of at most maxBytes of elements.
func NewDecodeCache(maxBytes int) *DecodeCache {
	return &DecodeCache{max: maxBytes, lru: list.New(), m: map[[32]byte]*list.Element{}}
}

// CacheKey is the cache key of an element of a wire format.
func CacheKey(format string, raw []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(format))
	h.Write([]byte{0})
	h.Write(raw)
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// Get returns the value stored for key.
func (c *DecodeCache) Get(key [32]byte) (any, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*cacheEntry).v, true
}

// Put stores v for key, an element of size bytes.
func (c *DecodeCache) Put(key [32]byte, size int, v any) {
	if c == nil || size > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		c.lru.MoveToFront(e)
		return
	}
	c.m[key] = c.lru.PushFront(&cacheEntry{key, size, v})
	c.size += size
	for c.size > c.max {
		last := c.lru.Back()
		ent := last.Value.(*cacheEntry)
		c.lru.Remove(last)
		delete(c.m, ent.key)
		c.size -= ent.size
	}
}

// DecodeMembers unmarshals the members named in dst (name → pointer) that
// are present and not null.
func DecodeMembers(members map[string]json.RawMessage, dst map[string]any) error {
	for k, v := range dst {
		if raw, ok := members[k]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, v); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	return nil
}

// SetMember returns the JSON object obj with the value of its top-level
// member key replaced by value (appended when absent), every other byte
// kept: the way a proxy edits one field of a large block without
// re-encoding the rest. obj that is not an object is returned as is.
func SetMember(obj []byte, key string, value []byte) []byte {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return obj
	}
	i = skipSpace(obj, i+1)
	last := -1 // end of the last member's value
	for i < len(obj) && obj[i] == '"' {
		kend, err := scanValue(obj, i)
		if err != nil {
			return obj
		}
		var k string
		if json.Unmarshal(obj[i:kend], &k) != nil {
			return obj
		}
		j := skipSpace(obj, kend)
		if j >= len(obj) || obj[j] != ':' {
			return obj
		}
		vstart := skipSpace(obj, j+1)
		vend, err := scanValue(obj, vstart)
		if err != nil {
			return obj
		}
		if k == key {
			out := make([]byte, 0, len(obj)-(vend-vstart)+len(value))
			out = append(out, obj[:vstart]...)
			out = append(out, value...)
			return append(out, obj[vend:]...)
		}
		last = vend
		i = skipSpace(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	kb, _ := json.Marshal(key)
	if last < 0 { // an empty object
		return append(append(append(append([]byte("{"), kb...), ':'), value...), '}')
	}
	out := make([]byte, 0, len(obj)+len(kb)+len(value)+2)
	out = append(out, obj[:last]...)
	out = append(out, ',')
	out = append(out, kb...)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, obj[last:]...)
}
