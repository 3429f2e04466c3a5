package session

import "github.com/vtcode/vtcode-ls/config"

// agentWriter reports whether job j's summary is written by the model of
// the request being served: a proxied session under [proxy] summarizer =
// "agent" whose served request carries credentials (the proxy built
// j.summarizer from it, for this request only). A request without
// credentials, an editor's compaction and every session of the daemon's
// own never are: they use compaction.writer among the daemon's own routes.
// compaction.writer = "offline" wins: then the offline summarizer always
// writes.
func (s *Session) agentWriter(j compactJob) bool {
	return s.px.init && j.summarizer != nil && j.e.cfg.Proxy.Summarizer == config.ProxySummarizerAgent && j.e.cfg.Writer != "offline"
}
