// Package httpapi is how the vendor clients call a provider over HTTP, the
// part they share: an [Endpoint] (route, base URL, key, client, retry
// policy) resolves to a [Caller] that posts JSON, retries what is safe to
// repeat ([RetryPolicy]), classifies every failure into a
// *providers.Error ([Classify], [ClassifyTransport]), removes credentials
// from every error and output ([Redact], [Credentials]), follows redirects
// only within the request's origin ([SameOriginRedirects]), and builds
// every upstream URL by one rule ([APIURL]); the proxy's forwarding uses the
// same URL rule and redaction.
//
// It sits between the contract (package providers) and the tables
// (providers/catalog) below it and the vendor clients above it; compaction
// and session never import it.
package httpapi
