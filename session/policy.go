package session

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/catalog"
)

// effective returns the workspace configuration, the session's effective
// policy (the workspace default with the session's patches applied in
// order) and the model catalog. The policy is cached per workspace
// generation.
func (s *Session) effective() (config.Config, config.Policy, *catalog.Catalog) {
	cfg, pol, cat, gen := s.ws.snapshot()
	if s.pol.valid && s.pol.gen == gen && s.pol.npatch == len(s.patches) {
		return s.pol.cfg, s.pol.policy, cat
	}
	pol = applyPatches(pol, s.patches, s.m.logger.With("session", s.id))
	s.pol = polCache{gen: gen, npatch: len(s.patches), valid: true, cfg: cfg, policy: pol}
	return cfg, pol, cat
}

// applyPatches applies policy patches in order. Each was validated when it
// was set, but a later change underneath (a reloaded file) can make one
// inapplicable: it is skipped with a warning.
func applyPatches(pol config.Policy, patches []json.RawMessage, logger *slog.Logger) config.Policy {
	for _, patch := range patches {
		p, err := config.ApplyJSON(pol, patch)
		if err != nil {
			logger.Warn("session: policy patch no longer applies; skipped", "err", err)
			continue
		}
		pol = p
	}
	return pol
}

// policy returns the session's effective policy.
func (s *Session) policy() config.Policy {
	_, pol, _ := s.effective()
	return pol
}

// tokenizerOf returns the tokenizer a policy names (o200k when invalid).
func tokenizerOf(pol config.Policy) history.Tokenizer {
	t, err := history.ParseTokenizer(pol.Context.Tokenizer)
	if err != nil {
		return history.O200k
	}
	return t
}

// Tokenizer returns the tokenizer of a workspace's sessions (empty: the
// first workspace), o200k when the workspace is unknown: a transport that
// estimates messages before they reach a session (the proxy's decode cache)
// uses the sessions' own method.
func (m *Manager) Tokenizer(workspace string) history.Tokenizer {
	cfg, err := m.WorkspaceConfig(workspace)
	if err != nil {
		return history.O200k
	}
	return tokenizerOf(cfg.Policy)
}

// syncEstimator switches the estimator when the tokenizer policy changed.
// Messages are re-estimated lazily: an estimate cached with another
// tokenizer is recomputed on first use.
func (s *Session) syncEstimator() {
	if t := tokenizerOf(s.policy()); s.est == nil || s.est.Tokenizer() != t {
		s.est = history.NewEstimator(t)
	}
}

// catalogEntries converts the [[models]] entries of cfg.
func catalogEntries(cfg config.Config) []catalog.ModelInfo {
	out := make([]catalog.ModelInfo, 0, len(cfg.Models))
	for _, m := range cfg.Models {
		out = append(out, catalog.ModelInfo{Provider: catalog.CanonicalProvider(m.Provider), Model: m.Model,
			ContextWindow: m.ContextWindow, MaxOutputTokens: m.MaxOutputTokens,
			Cache: catalog.CacheCost{Read: m.CacheRead, Write: m.CacheWrite, TTL: time.Duration(m.CacheTTLSeconds) * time.Second},
			Price: catalog.Price{Input: m.InputPrice, CacheRead: m.CacheReadPrice, CacheWrite5m: m.CacheWritePrice,
				CacheWrite1h: m.CacheWrite1hPrice, Output: m.OutputPrice, TierTokens: m.PriceTierTokens,
				TierInput: m.PriceTierInput, TierOutput: m.PriceTierOutput, AsOf: m.PricesAsOf}})
	}
	return out
}

// routeOverrides converts the [[compaction.routes]] entries of cfg that
// apply to a session of agent (the proxied agent's family, "" for one an
// editor drives): an entry naming an agent applies to that agent's
// sessions only.
func routeOverrides(cfg config.Config, agent string) []compaction.RouteOverride {
	out := make([]compaction.RouteOverride, 0, len(cfg.Routes))
	for _, r := range cfg.Routes {
		if r.Agent != "" && !agentIs(r.Agent, agent) {
			continue
		}
		out = append(out, compaction.RouteOverride{Provider: r.Provider, Model: r.Model,
			ThresholdRatio: r.ThresholdRatio, RetainRatio: r.RetainRatio, MaxOverflowRetries: r.MaxOverflowRetries})
	}
	return out
}

// providerConfig returns the [providers.<name>] table of cfg.
func providerConfig(cfg config.Config, name string) (config.ProviderConfig, bool) {
	for k, pc := range cfg.Providers {
		if catalog.CanonicalProvider(k) == name || strings.EqualFold(k, name) {
			return pc, true
		}
	}
	return config.ProviderConfig{}, false
}

// SetPolicy changes the policy of one session (SessionID set; recorded as an
// event, so it survives a restart) or the default of a workspace (kept for
// the life of the process, like initializationOptions; it applies to every
// session of the workspace on the keys the session did not override). The
// patch is partial; unknown keys and bad values fail with a
// *config.FieldError naming the field, and nothing is applied. It returns
// the effective policy.
func (m *Manager) SetPolicy(ctx context.Context, p SetPolicyParams) (*config.Policy, error) {
	if len(p.Policy) == 0 || isJSONNull(p.Policy) {
		return nil, paramErr("policy", "required")
	}
	if p.SessionID == "" {
		return inTurn(ctx, m, "", func(context.Context) (*config.Policy, error) {
			w, err := m.workspaceFor(p.Workspace, "workspace")
			if err != nil {
				return nil, err
			}
			pol, err := w.setPolicy(p.Policy)
			if err != nil {
				return nil, err
			}
			m.refreshAll(w)
			return &pol, nil
		})
	}
	return run(ctx, m, p.SessionID, func(ctx context.Context, s *Session) (*config.Policy, error) {
		if _, err := config.ApplyJSON(s.policy(), p.Policy); err != nil {
			return nil, err
		}
		if err := s.record(evPolicy, policyData{Policy: p.Policy}); err != nil {
			return nil, err
		}
		s.notifyPressure(s.refreshStats())
		pol := s.policy()
		return &pol, nil
	})
}

// GetPolicy returns the effective policy of a session, or the default of a
// workspace when SessionID is empty.
func (m *Manager) GetPolicy(ctx context.Context, p GetPolicyParams) (*config.Policy, error) {
	if p.SessionID == "" {
		return inTurn(ctx, m, "", func(context.Context) (*config.Policy, error) {
			w, err := m.workspaceFor(p.Workspace, "workspace")
			if err != nil {
				return nil, err
			}
			_, pol, _, _ := w.snapshot()
			return &pol, nil
		})
	}
	return run(ctx, m, p.SessionID, func(ctx context.Context, s *Session) (*config.Policy, error) {
		pol := s.policy()
		return &pol, nil
	})
}
