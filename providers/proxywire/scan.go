package proxywire

import (
	"bytes"
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"reflect"
	"slices"
	"sync"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
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
			return nil, Span{}, nil, fmt.Errorf("request body: member %q appears twice", providers.Bound(key, 40))
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

// DecodeCache remembers decoded conversation elements by their bytes, so
// that a proxy decodes each message of a conversation once although the
// agent sends it with every request. It holds at most max bytes of elements
// (least recently used dropped first) and is safe for concurrent use. Values
// must not be modified by their users.
//
// An element is found by its length and a seeded hash of a fixed sample of
// its bytes (its start, middle and end), and taken only when its bytes are
// the stored ones: a lookup costs a constant-time hash and one comparison
// at memory speed (a cryptographic digest of every resent message, then a
// hash of all its bytes, was most of a proxied request's decoding).
// Elements that share a sample are kept side by side, so no collision can
// hand back another element's decode nor make two of them evict each other;
// past maxChain of them (elements built to share it), the others are found
// by a hash of all their bytes, so a lookup never compares more than
// maxChain elements.
//
// A decode given the sessions' estimator ([DecodeCache.Estimating]) gives
// the messages of a newly decoded element their token estimates before
// storing it ([DecodeCache.Estimate]): every later request carrying the
// element copies its messages with the estimates, so a resent message, an
// assistant message included, is not tokenized again.
type DecodeCache struct {
	s   *cacheStore
	est *history.Estimator
}

// cacheStore is the elements of a DecodeCache and its handles.
type cacheStore struct {
	mu   sync.Mutex
	max  int
	size int
	seed maphash.Seed
	lru  *list.List // of *cacheEntry, most recent first
	m    map[cacheKey][]*list.Element
}

type cacheKey struct {
	format string
	n      int    // the element's length
	sum    uint64 // hash of a sample of its bytes, or of all (whole)
	whole  bool
}

// sampleBytes is how many bytes of each of an element's start, middle and
// end its cache key hashes; maxChain bounds the elements kept under one
// sampled key.
const (
	sampleBytes = 64
	maxChain    = 8
)

// key returns the sampled cache key of the element raw of a format.
func (s *cacheStore) key(format string, raw []byte) cacheKey {
	n := len(raw)
	if n <= 3*sampleBytes {
		return cacheKey{format, n, maphash.Bytes(s.seed, raw), false}
	}
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.Write(raw[:sampleBytes])
	h.Write(raw[(n-sampleBytes)/2 : (n+sampleBytes)/2])
	h.Write(raw[n-sampleBytes:])
	return cacheKey{format, n, h.Sum64(), false}
}

// lookup returns the entry whose bytes are raw (nil for none) and the key
// raw is stored under: k, its sampled key, unless that one holds maxChain
// elements already. s.mu is held.
func (s *cacheStore) lookup(k cacheKey, raw []byte) (*list.Element, cacheKey) {
	for range 2 {
		chain := s.m[k]
		for _, e := range chain {
			if bytes.Equal(e.Value.(*cacheEntry).raw, raw) {
				return e, k
			}
		}
		if len(chain) < maxChain || k.whole {
			return nil, k
		}
		k = cacheKey{k.format, k.n, maphash.Bytes(s.seed, raw), true}
	}
	return nil, k
}

type cacheEntry struct {
	key cacheKey
	raw []byte
	v   any
}

// NewDecodeCache returns a cache of at most maxBytes of elements.
func NewDecodeCache(maxBytes int) *DecodeCache {
	return &DecodeCache{s: &cacheStore{max: maxBytes, seed: maphash.MakeSeed(), lru: list.New(), m: map[cacheKey][]*list.Element{}}}
}

// Estimating returns the cache, the same elements, for a decode whose new
// elements [DecodeCache.Estimate] estimates with e: that of the sessions
// the decoded messages go to (a session whose tokenizer differs estimates
// them again itself).
func (c *DecodeCache) Estimating(e *history.Estimator) *DecodeCache {
	if c == nil {
		return nil
	}
	return &DecodeCache{s: c.s, est: e}
}

// Estimate gives msgs, the messages of a newly decoded element not shared
// yet, their estimates under the cache's estimator, if it has one.
func (c *DecodeCache) Estimate(msgs []history.Message) {
	if c == nil || c.est == nil {
		return
	}
	for i := range msgs {
		c.est.Message(&msgs[i])
	}
}

// Get returns the value stored for the element raw of a wire format.
func (c *DecodeCache) Get(format string, raw []byte) (any, bool) {
	if c == nil {
		return nil, false
	}
	s := c.s
	k := s.key(format, raw)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, _ := s.lookup(k, raw)
	if e == nil {
		return nil, false
	}
	s.lru.MoveToFront(e)
	return e.Value.(*cacheEntry).v, true
}

// Put stores v for the element raw of a wire format. The cache keeps raw
// to compare elements by their bytes: it must be a copy that nothing
// modifies and that pins no larger buffer (the copy a decoded value holds
// already costs nothing more).
func (c *DecodeCache) Put(format string, raw []byte, v any) {
	if c == nil || len(raw) > c.s.max {
		return
	}
	s := c.s
	k := s.key(format, raw)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, k := s.lookup(k, raw)
	if e != nil {
		s.lru.MoveToFront(e)
		return
	}
	s.m[k] = append(s.m[k], s.lru.PushFront(&cacheEntry{k, raw, v}))
	s.size += len(raw)
	for s.size > s.max {
		s.remove(s.lru.Back())
	}
}

// remove drops the entry e; s.mu is held.
func (s *cacheStore) remove(e *list.Element) {
	ent := e.Value.(*cacheEntry)
	s.lru.Remove(e)
	list := s.m[ent.key]
	if i := slices.Index(list, e); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(s.m, ent.key)
	} else {
		s.m[ent.key] = list
	}
	s.size -= len(ent.raw)
}

// DecodeMembers unmarshals the members named in dst (name → pointer) that
// are present and not null.
func DecodeMembers(members map[string]json.RawMessage, dst map[string]any) error {
	return (*DecodeCache)(nil).DecodeMembers(members, dst)
}

// minCachedMember is the size from which a top-level member's decoding is
// kept in the cache: the tool schemas and the system prompt, tens of
// kilobytes an agent resends unchanged with every request, not the model
// name.
const minCachedMember = 1 << 10

// DecodeMembers is [DecodeMembers] with the decoding of large members (the
// tools, the instructions) kept in c by their bytes, so that a request
// whose members are those of an earlier one decodes none of them again.
// The pointers of dst must point at zero values (a cached value replaces
// the whole value, where json.Unmarshal would merge into it). The values
// set are shared with later requests: they must not be modified (a slice
// is set with no spare capacity, so an append copies).
func (c *DecodeCache) DecodeMembers(members map[string]json.RawMessage, dst map[string]any) error {
	for k, v := range dst {
		raw, ok := members[k]
		if !ok || string(raw) == "null" {
			continue
		}
		if c == nil || len(raw) < minCachedMember {
			if err := json.Unmarshal(raw, v); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			continue
		}
		ptr := reflect.ValueOf(v)
		format := "member " + ptr.Type().String()
		if got, ok := c.Get(format, raw); ok {
			ptr.Elem().Set(reflect.ValueOf(got))
			continue
		}
		if err := json.Unmarshal(raw, v); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		val := ptr.Elem()
		if val.Kind() == reflect.Slice {
			val.Set(val.Slice3(0, val.Len(), val.Len()))
		}
		c.Put(format, bytes.Clone(raw), val.Interface())
	}
	return nil
}

// Member returns what decode makes of raw, a top-level member of a
// request body (a system prompt): from c when it holds these bytes, else
// decoded and, when large, kept (see [DecodeCache.DecodeMembers]). kind
// tells apart the decodings of one member. The value must not be modified.
func Member[T any](c *DecodeCache, kind string, raw json.RawMessage, decode func(json.RawMessage) T) T {
	if c == nil || len(raw) < minCachedMember {
		return decode(raw)
	}
	if got, ok := c.Get(kind, raw); ok {
		return got.(T)
	}
	v := decode(raw)
	c.Put(kind, bytes.Clone(raw), v)
	return v
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
