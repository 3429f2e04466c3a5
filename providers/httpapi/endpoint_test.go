package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
)

func TestEndpointResolve(t *testing.T) {
	hc := &http.Client{}
	log := slog.New(slog.DiscardHandler)
	e := httpapi.Endpoint{Provider: "claude-proxy", APIKey: "k", Model: "m", HTTPClient: hc, Logger: log,
		Retry: httpapi.RetryPolicy{MaxAttempts: 2}}
	base, c, err := e.Resolve("anthropic")
	if err != nil {
		t.Fatal(err)
	}
	if base != "https://api.anthropic.com/v1" {
		t.Errorf("base = %q", base)
	}
	if c.Provider != "claude-proxy" || c.APIKey != "k" || c.HTTPClient != hc || c.Logger != log || c.Retry.MaxAttempts != 2 {
		t.Errorf("caller = %+v", c)
	}
	e.BaseURL = "http://localhost:9/v1/"
	if base, _, err := e.Resolve(e.Provider); err != nil || base != "http://localhost:9/v1" {
		t.Errorf("configured base = %q, %v", base, err)
	}
	for _, tc := range []struct{ table, base, err string }{
		{"my-proxy", "", `provider "my-proxy" needs a base_url`},
		{"openai", "ftp://x", `provider "openai": base_url must be an absolute http(s) URL`},
	} {
		e := httpapi.Endpoint{Provider: tc.table, BaseURL: tc.base}
		if _, c, err := e.Resolve(tc.table); err == nil || err.Error() != tc.err || c != nil {
			t.Errorf("Resolve(%q) with base %q: %v, want %s", tc.table, tc.base, err, tc.err)
		}
	}
	r := (&httpapi.Endpoint{Provider: "xai", Model: "grok", BaseURL: "https://x/v1"}).Route()
	if r != (providers.Route{Provider: "xai", Model: "grok", BaseURL: "https://x/v1"}) {
		t.Errorf("route = %+v", r)
	}
}

func TestEndpointRequestHeader(t *testing.T) {
	e := httpapi.Endpoint{APIKey: "secret", Header: http.Header{"x-extra": {"1", "2"}, "anthropic-beta": {"b"}, "Accept": {"text/plain"}}}
	h := e.RequestHeader(false)
	want := http.Header{"X-Extra": {"1", "2"}, "Anthropic-Beta": {"b"}, "Accept": {"text/plain"}}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	h["X-Extra"][0] = "changed"
	if map[string][]string(e.Header)["x-extra"][0] != "1" { // the key as configured, not canonical
		t.Error("RequestHeader shares values with Endpoint.Header")
	}
	h = e.RequestHeader(true, "Anthropic-Beta")
	want = http.Header{"X-Extra": {"1", "2"}, "Accept": {"text/event-stream"}}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("stream header without anthropic-beta (-want +got):\n%s", diff)
	}
}

func TestReadJSON(t *testing.T) {
	c := &httpapi.Caller{Provider: "p", APIKey: "sk-secret"}
	resp := func(body string) *http.Response {
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(body))}
	}
	var v struct{ A int }
	data, err := c.ReadJSON(context.Background(), "m", resp(`{"A":7}`), &v)
	if err != nil || v.A != 7 || string(data) != `{"A":7}` {
		t.Errorf("ReadJSON = %s, %+v, %v", data, v, err)
	}
	if _, err := c.ReadJSON(context.Background(), "m", resp(`{"A":`), &v); providers.KindOf(err) != providers.KindMalformed {
		t.Errorf("truncated JSON: %v, want kind malformed", err)
	}
}
