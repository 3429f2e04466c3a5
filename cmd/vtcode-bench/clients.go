package main

import (
	"fmt"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/session"
	"github.com/vtcode/vtcode-ls/summary"
)

// offlineClients is the ClientFactory of the benchmarks' managers: they
// measure the daemon with its embedded offline summarizer, the default
// route, and never reach a network provider.
func offlineClients(route providers.Route, _ config.Config) (providers.Generator, error) {
	switch catalog.CanonicalProvider(route.Provider) {
	case "", "offline":
		return summary.New(), nil
	}
	return nil, fmt.Errorf("provider %q: the benchmarks run offline only", route.Provider)
}

var _ session.ClientFactory = offlineClients
