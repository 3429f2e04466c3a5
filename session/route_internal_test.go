package session

import (
	"testing"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/providers/catalog"
)

// Whether a route takes the Anthropic clearing edits is the catalog's answer
// for its model, unless the user's [providers.<name>] table says otherwise.
func TestProviderRouteContextEditsFromCatalog(t *testing.T) {
	no, yes := false, true
	house := catalog.WithModels([]catalog.ModelInfo{{Provider: "anthropic", Model: "house-model", ContextEdits: true}})
	cases := []struct {
		name     string
		r        route
		cfg      config.Config
		cat      *catalog.Catalog
		want     bool
		wantName string
	}{
		{"claude 4 on anthropic", route{Provider: "anthropic", Model: "claude-sonnet-4-6"}, config.Config{}, nil, true, "anthropic"},
		{"claude 3 on anthropic", route{Provider: "anthropic", Model: "claude-3-5-sonnet-20241022"}, config.Config{}, nil, false, "anthropic"},
		{"unknown model on anthropic", route{Provider: "anthropic", Model: "house-model"}, config.Config{}, nil, false, "anthropic"},
		{"workspace catalog entry", route{Provider: "anthropic", Model: "house-model"}, config.Config{}, house, true, "anthropic"},
		{"claude on a chat route", route{Provider: "openrouter", Model: "anthropic/claude-sonnet-4.5"}, config.Config{}, nil, false, "openrouter"},
		{"offline", route{}, config.Config{}, nil, false, "offline"},
		{"configured off", route{Provider: "anthropic", Model: "claude-sonnet-4-6"},
			config.Config{Providers: map[string]config.ProviderConfig{"anthropic": {SupportsContextEdits: &no}}}, nil, false, "anthropic"},
		{"configured on", route{Provider: "anthropic", Model: "claude-3-5-sonnet-20241022"},
			config.Config{Providers: map[string]config.ProviderConfig{"anthropic": {SupportsContextEdits: &yes}}}, nil, true, "anthropic"},
		{"other table set, catalog decides", route{Provider: "anthropic", Model: "claude-opus-4-5"},
			config.Config{Providers: map[string]config.ProviderConfig{"anthropic": {NativeCompaction: "never"}}}, nil, true, "anthropic"},
	}
	for _, c := range cases {
		pr := providerRoute(c.r, c.cfg, c.cat)
		info, _ := c.cat.Lookup(pr.Provider, c.r.Model)
		if pr.SupportsContextEdits != c.want || pr.Provider != c.wantName {
			t.Errorf("%s: route %+v, want provider %s with context edits %v (catalog says %v)", c.name, pr, c.wantName, c.want, info.ContextEdits)
		}
	}
}
