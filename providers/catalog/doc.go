// Package catalog is what the engine knows about routes and models, as
// tables: one row per provider (its name and aliases, wire format, official
// endpoint, API key variable, how its vendor bills the prompt cache and
// reports usage) and one row per model family (context window, output
// limit, cache pricing where it differs from the vendor's, list price).
// [Catalog.Lookup] and [Catalog.Cost] answer every question about a model
// on a route, with the family rules deriving capabilities (native
// compaction, thinking) from the model id, and [[models]] entries from the
// configuration taking precedence ([WithModels]). [Price] and [Bill] turn a
// response's usage into dollars.
//
// Adding a model family is one row of builtinModels; adding a provider is
// one row of the provider table. The package is data and lookups only: it
// makes no calls and reads no files, so compaction and session, which need
// the facts but never a vendor client, import it and nothing of the HTTP
// layer.
package catalog
