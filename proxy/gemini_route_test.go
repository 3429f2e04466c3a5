package proxy

import "testing"

func TestGeminiRouteAndUpstream(t *testing.T) {
	for _, c := range []struct {
		path  string
		ep    endpoint
		model string
	}{
		{"/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent", geminiStream, "gemini-3.1-pro-preview"},
		{"/v1/models/gemini-2.5-flash:generateContent", geminiGenerate, "gemini-2.5-flash"},
		{"/v1beta/tunedModels/my-model:countTokens", geminiCount, "my-model"},
		{"/v1beta/models/gemini-x:embedContent", passThrough, ""},
		{"/v1beta/models", passThrough, ""},
		{"/v1beta/models/:generateContent", passThrough, ""},
	} {
		if ep, model := geminiRoute(c.path); ep != c.ep || model != c.model {
			t.Errorf("geminiRoute(%q) = %v %q, want %v %q", c.path, ep, model, c.ep, c.model)
		}
	}
	const p = "/v1beta/models/m:generateContent"
	for _, c := range []struct{ configured, base, path string }{
		{"", "https://generativelanguage.googleapis.com", p},
		{"https://generativelanguage.googleapis.com/v1beta/openai", "https://generativelanguage.googleapis.com", p}, // the engine's own (chat) base
		{"http://127.0.0.1:9000", "http://127.0.0.1:9000", p},
		{"https://gw.example/gemini/v1beta/", "https://gw.example/gemini/v1beta", "/models/m:generateContent"},
	} {
		if base, path := geminiUpstream(c.configured, p); base != c.base || path != c.path {
			t.Errorf("geminiUpstream(%q) = %q %q, want %q %q", c.configured, base, path, c.base, c.path)
		}
	}
}
