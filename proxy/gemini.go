package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/providers/gemini"
	"github.com/vtcode/vtcode-ls/providers/proxywire"
)

// The Gemini API (Gemini CLI with GOOGLE_GEMINI_BASE_URL): the model is in
// the path, POST /v1beta/models/{model}:generateContent,
// :streamGenerateContent (?alt=sse) and :countTokens; the key travels in
// x-goog-api-key (or ?key=) and goes upstream as it came.

// geminiBase is the Gemini API's official endpoint, without a version: the
// agent's path carries /v1beta.
const geminiBase = "https://generativelanguage.googleapis.com"

// geminiRoute returns the endpoint of a Gemini API path
// (/v1beta/models/{model}:method, /v1/…, tunedModels too) and its model;
// passThrough for any other path.
func geminiRoute(path string) (endpoint, string) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return passThrough, ""
	}
	dir, last := path[:i], path[i+1:]
	if !strings.HasSuffix(dir, "/models") && !strings.HasSuffix(dir, "/tunedModels") {
		return passThrough, ""
	}
	model, method, ok := strings.Cut(last, ":")
	if !ok || model == "" {
		return passThrough, ""
	}
	switch method {
	case "generateContent":
		return geminiGenerate, model
	case "streamGenerateContent":
		return geminiStream, model
	case "countTokens":
		return geminiCount, model
	}
	return passThrough, ""
}

// isGemini reports whether the endpoint is one of the Gemini API's.
func (e endpoint) isGemini() bool {
	return e == geminiGenerate || e == geminiStream || e == geminiCount
}

// looksGemini reports whether a request the path does not place (GET
// /v1beta/models, a file upload) is for the Gemini API.
func looksGemini(r *http.Request) bool {
	return r.Header.Get("x-goog-api-key") != "" || r.Header.Get("x-goog-api-client") != "" || looksGeminiPath(r.URL.Path)
}

// geminiUpstream returns the base URL and path of a Gemini API request:
// the official endpoint by default (whose OpenAI-compatible /v1beta/openai
// the engine's own calls use), the configured base_url otherwise; a base
// URL that ends in the API version (…/v1beta) takes the path without it.
func geminiUpstream(configured, path string) (base, rest string) {
	base = strings.TrimRight(strings.TrimSpace(configured), "/")
	if base == "" || catalog.IsOfficialBaseURL("gemini", base) {
		base = strings.TrimSuffix(strings.TrimSuffix(base, "/openai"), "/v1beta")
		if base == "" {
			base = geminiBase
		}
	}
	for _, v := range []string{"/v1beta", "/v1alpha", "/v1"} {
		if strings.HasSuffix(base, v) {
			if p, ok := strings.CutPrefix(path, v+"/"); ok {
				return base, "/" + p
			}
		}
	}
	return base, path
}

// decodeGemini decodes a Gemini API body; the model is the path's.
func decodeGemini(ep endpoint, path string, body []byte, cache *proxywire.DecodeCache) (*decoded, error) {
	_, model := geminiRoute(path)
	wr, err := gemini.DecodeRequest(body, model, ep == geminiStream, cache)
	return &decoded{wr, gemini.Recorder, gemini.Record}, err
}

// looksGeminiPath reports whether a path is under the Gemini API's
// versions (a model list, a file upload).
func looksGeminiPath(path string) bool {
	for _, v := range []string{"/v1beta/", "/v1alpha/", "/upload/v1beta/"} {
		if strings.HasPrefix(path, v) {
			return true
		}
	}
	return false
}

// geminiTreeMarker starts the workspace's directory tree in Gemini CLI's
// <session_context>: the tree changes as files come and go (the session
// store among them) and is written anew after the agent's compression, so
// it is not part of the session's identity.
const geminiTreeMarker = "\n- **Directory Structure:**"

// geminiKey is the session identity of a Gemini CLI request, which names no
// session: its first user message (Gemini CLI's <session_context> block:
// the date, the workspace and the project's temporary directory) up to the
// directory tree, for the requests that carry the agent's tools and for its
// compression requests, whose system prompt is not the conversation's.
// Other requests (routing, next-speaker checks) are threads of their own
// ("": the fingerprint).
func geminiKey(ep endpoint, h http.Header, wr *proxywire.WireRequest) string {
	if len(wr.Tools) == 0 && !isAgentCompaction(ep, h, wr) {
		return ""
	}
	for i := range wr.Messages {
		if wr.Messages[i].Role == history.User {
			text := wr.Messages[i].Text()
			if j := strings.Index(text, geminiTreeMarker); j >= 0 {
				text = text[:j]
			}
			sum := sha256.Sum256([]byte(text))
			return "gemini\x00" + hex.EncodeToString(sum[:12])
		}
	}
	return ""
}
