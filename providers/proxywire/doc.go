// Package proxywire is what a proxy needs of a vendor's request and
// response bodies, whatever the vendor: a request body kept byte for byte
// ([WireRequest], whose Encode changes only the conversation from the first
// message that differs), the structure scan that finds the conversation's
// elements in one pass ([Members], [SetMember]), the cache that decodes each
// resent element and large top-level member (tool schemas, a system prompt)
// once ([DecodeCache], [DecodeCache.DecodeMembers]) and the recorder that
// reads a copy of a forwarded event stream ([SSERecorder]).
//
// It is a leaf below the vendor packages (providers/anthropic, openai,
// chatcompat, gemini), which decode their formats into these types, on
// providers/sse, the event-stream reader; package proxy, the HTTP side,
// uses both. It cannot live in proxy itself: proxy imports the
// vendor packages, which would then import proxy. Messages and their
// digests are history's ([history.MessageKey], [history.Response]); the
// session sees none of these wire shapes.
package proxywire
