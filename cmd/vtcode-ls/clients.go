package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/anthropic"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/providers/chatcompat"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
	"github.com/vtcode/vtcode-ls/providers/openai"
	"github.com/vtcode/vtcode-ls/session"
	"github.com/vtcode/vtcode-ls/summary"
)

// Base URLs of local servers the provider table does not know.
var localBaseURLs = map[string]string{
	"lmstudio": "http://localhost:1234/v1",
}

// clientFactory returns the session.ClientFactory of the daemon and the
// one-shot commands: it builds the vendor client of a route from the
// workspace configuration. Provider "" and "offline" get the embedded offline
// summarizer. The base URL and the API key variable come from
// [providers.<name>] in the configuration, with the provider table's
// defaults; config.Load reads those two keys from the user's file only,
// never from a workspace file. The key is read from the environment only,
// and never logged.
func clientFactory(logger *slog.Logger) session.ClientFactory {
	return clientFactoryEnv(logger, os.Getenv)
}

// clientFactoryEnv is clientFactory reading API keys with getenv.
func clientFactoryEnv(logger *slog.Logger, getenv func(string) string) session.ClientFactory {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	return func(route providers.Route, cfg config.Config) (providers.Generator, error) {
		return newClient(route, cfg, logger, getenv)
	}
}

// newClient builds the client of route; getenv reads the API key.
func newClient(route providers.Route, cfg config.Config, logger *slog.Logger, getenv func(string) string) (providers.Generator, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	name := catalog.CanonicalProvider(route.Provider)
	if name == "" || name == "offline" {
		return summary.New(), nil
	}
	pc, ok := cfg.Providers[name]
	if !ok {
		pc = cfg.Providers[route.Provider]
	}
	base := route.BaseURL
	if base == "" {
		base = pc.BaseURL
	}
	if base == "" {
		base = localBaseURLs[name]
	}
	wire := catalog.WireOf(name)
	if !known(name) && base == "" {
		return nil, fmt.Errorf("provider %q: unknown provider without a base URL; set [providers.%s] base_url in the user configuration (~/.config/vtcode/vtcode.toml) for an OpenAI-compatible server, or use one of: %s",
			route.Provider, name, strings.Join(catalog.KnownProviders(), ", "))
	}
	env := pc.APIKeyEnv
	if env == "" {
		env = catalog.DefaultAPIKeyEnv(name)
	}
	key := ""
	if env != "" {
		key = getenv(env)
		if key == "" {
			return nil, fmt.Errorf("provider %s: no API key: environment variable %s is not set (set [providers.%s] api_key_env in the user configuration to use another variable)", name, env, name)
		}
	}
	ep := httpapi.Endpoint{Provider: name, BaseURL: base, APIKey: key, Model: route.Model, Logger: logger}
	switch wire {
	case providers.WireResponses:
		return generator(openai.New(openai.Config{Endpoint: ep}))
	case providers.WireAnthropic:
		return generator(anthropic.New(anthropic.Config{Endpoint: ep}))
	case providers.WireOffline:
		return summary.New(), nil
	default:
		return generator(chatcompat.New(chatcompat.Config{Endpoint: ep}))
	}
}

// generator returns a vendor constructor's client as a providers.Generator,
// and a nil Generator (not a typed nil) with its error.
func generator[C providers.Generator](c C, err error) (providers.Generator, error) {
	if err != nil {
		return nil, err
	}
	return c, nil
}

func known(name string) bool {
	if _, ok := localBaseURLs[name]; ok {
		return true
	}
	for _, p := range catalog.KnownProviders() {
		if p == name {
			return true
		}
	}
	return false
}
