package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// Config is the merged configuration of one workspace.
type Config struct {
	Policy Policy
	// Summarizer is the route that writes local summaries; empty fields mean
	// the session's own route.
	Summarizer Summarizer
	// Routes are the [[compaction.routes]] overrides, first match wins.
	Routes []RouteOverride
	// Writer is compaction.writer: "offline" (the offline summarizer always
	// writes the summary), "model" (the summarizer route's model writes it,
	// checked by the record; without that model's client the compaction
	// fails, in proxy mode too) or "auto" (the default, "" too: the model,
	// checked by the record, except in a proxied session without a key of
	// the daemon's own, which summarizes offline).
	Writer string
	// Pin is the text of compaction.pin: what every summary carries
	// verbatim, whatever it summarizes (each file's list after the lower
	// files', each string once).
	Pin []string
	// Providers are the [providers.<name>] tables, by name. Never nil.
	Providers map[string]ProviderConfig
	// Models are the [[models]] catalog additions and corrections.
	Models []ModelEntry
	// Storage is where sessions are stored.
	Storage Storage
	// Proxy is the [proxy] table.
	Proxy Proxy
	// Daemon is the [daemon] table: the user's shared daemon (user file
	// only).
	Daemon Daemon
	// Files lists the configuration files that were read, lowest precedence first.
	Files []string
	// Warnings are the keys a workspace file set but may not set (see
	// [UserOnlyKeys]): each names its file and line; the key was ignored and
	// the rest of the file applied. The caller shows them to the user.
	Warnings []*FileError
}

// Summarizer names the route used for local summaries (compaction.summarizer).
type Summarizer struct {
	Provider, Model string
}

// RouteOverride is one [[compaction.routes]] entry: it applies to routes whose
// provider and model contain Provider and Model (an empty string matches
// every route). Nil fields keep the base route policy.
type RouteOverride struct {
	Provider, Model string
	// Agent limits the entry to the sessions of a proxied agent ("codex",
	// "claude", "opencode", as the proxy identifies it); "" matches all.
	Agent              string
	ThresholdRatio     *float64
	RetainRatio        *float64
	MaxOverflowRetries *int
}

// ProviderConfig is a [providers.<name>] table.
type ProviderConfig struct {
	BaseURL string // empty: the provider's official endpoint
	// APIKeyEnv names the environment variable holding the API key. The key
	// itself is never part of the configuration.
	APIKeyEnv string
	// NativeCompaction is "auto" (the built-in gates), "always" or "never".
	NativeCompaction string
	// SupportsContextEdits overrides whether an Anthropic-format route accepts
	// the clearing edits; nil means not configured.
	SupportsContextEdits *bool
}

// ModelEntry is a [[models]] entry. Zero sizes mean "not set".
type ModelEntry struct {
	Provider, Model string
	ContextWindow   int
	MaxOutputTokens int
	// Prompt-cache pricing (cache_read_multiplier, cache_write_multiplier,
	// cache_ttl_seconds): cost of a cached and of a written input token
	// relative to an uncached one, and the cache's lifetime. Zero: not set.
	CacheRead, CacheWrite float64
	CacheTTLSeconds       int
	// List prices in US dollars per million tokens (input_price,
	// cache_read_price, cache_write_price, cache_write_1h_price,
	// output_price), the long-context tier (price_tier_tokens: above that
	// many prompt tokens a request is billed at price_tier_input_multiplier
	// × the input prices and price_tier_output_multiplier × the output
	// price) and the date the prices were read (prices_as_of). Zero: not set.
	InputPrice, CacheReadPrice, CacheWritePrice, CacheWrite1hPrice, OutputPrice float64
	PriceTierTokens                                                             int
	PriceTierInput, PriceTierOutput                                             float64
	PricesAsOf                                                                  string
}

// Storage configures persistence ([storage]).
type Storage struct {
	// Dir is the store root: storage.dir resolved against the workspace
	// ("~/" expands to the home folder), by default <workspace>/.vtcode/sessions.
	// Empty when neither a workspace nor storage.dir is known.
	Dir string
	// DirFromWorkspace is set when the workspace's own file (untrusted: it
	// comes with the repository) set storage.dir; the session layer then
	// accepts only a folder inside the workspace.
	DirFromWorkspace bool
	// KeepArtifacts is storage.keep_artifacts: how many artifacts of a
	// session are kept, the newest; 0 keeps all. Default 20.
	KeepArtifacts int
}

// DefaultKeepArtifacts is the default of storage.keep_artifacts.
const DefaultKeepArtifacts = 20

// FileError reports a problem in a configuration file. Line is 1-based; 0
// when the position is unknown.
type FileError struct {
	File string
	Line int
	Msg  string
}

// Error reads "<file>:<line>: <msg>", or "<file>: <msg>" when the line is unknown.
func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Errors is every problem [Load] found in the configuration files, sorted by
// file (lowest precedence first) and line. errors.As finds the first as a
// [*FileError].
type Errors []*FileError

// Error lists every problem, "<file>:<line>: <msg>", separated by "; ".
func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns the problems, for errors.As and errors.Is.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// DefaultStorageDir is the store root of a workspace when storage.dir is not
// set: <workspace>/.vtcode/sessions.
func DefaultStorageDir(workspace string) string {
	return filepath.Join(workspace, ".vtcode", "sessions")
}

// DefaultConfig returns the configuration used when no file sets anything.
func DefaultConfig(workspace string) Config {
	c := Config{Policy: Default(), Providers: map[string]ProviderConfig{}}
	c.Storage.KeepArtifacts = DefaultKeepArtifacts
	if workspace != "" {
		c.Storage.Dir = DefaultStorageDir(workspace)
	}
	return c
}

// WorkspaceFile returns the workspace's configuration file: <workspace>/vtcode.toml
// if it exists, else <workspace>/.vtcode/config.toml if that exists, else "".
func WorkspaceFile(workspace string) string {
	for _, p := range []string{
		filepath.Join(workspace, "vtcode.toml"),
		filepath.Join(workspace, ".vtcode", "config.toml"),
	} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// UserOnlyKeys are the keys that pick a host or a secret: a workspace file is
// inside a repository anyone may have written, so these keys are read only
// from the user file (and "*" stands for every provider table). A workspace
// file that sets one gets a [Config.Warnings] entry and the key is ignored;
// a workspace file chooses among the providers the user file (or the
// built-in table) configures, never where they are or which credential they
// send.
var UserOnlyKeys = map[string]string{
	"providers.*.base_url":    "an endpoint",
	"providers.*.api_key_env": "a credential variable",
	"proxy.allowed_origins":   "the web pages the proxy serves",
	"proxy.summarizer":        "whose credential pays for summaries",
	"daemon.idle":             "the shared daemon's lifetime",
}

// Load merges the defaults, userFile (skipped when "" or missing) and the
// workspace file (see [WorkspaceFile]; skipped when workspace is "") into a
// Config. The keys of [UserOnlyKeys] are read from userFile only; a
// storage.dir in the workspace file must be a relative path that stays in
// the workspace. Both are reported as Warnings and ignored.
//
// A file with an error is not applied; Load reads every file and returns
// all the problems it found as [Errors] ([*FileError]s naming file and line).
func Load(userFile, workspace string) (Config, error) {
	c := DefaultConfig(workspace)
	type layer struct {
		file      string
		workspace bool
	}
	var layers []layer
	if userFile != "" {
		layers = append(layers, layer{userFile, false})
	}
	if workspace != "" {
		if f := WorkspaceFile(workspace); f != "" {
			layers = append(layers, layer{f, true})
		}
	}
	var (
		dir  *string
		errs Errors
	)
	for _, l := range layers {
		src, err := os.ReadFile(l.file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, &FileError{File: l.file, Msg: bound(err.Error())})
			continue
		}
		trust := trustUser
		if l.workspace {
			trust = trustWorkspace{userFile: userFile}
		}
		d, ferrs := decodeLayer(l.file, src, &c, trust)
		if len(ferrs) > 0 {
			errs = append(errs, ferrs...)
			continue
		}
		if d != nil {
			dir = d
			c.Storage.DirFromWorkspace = l.workspace
		}
		c.Files = append(c.Files, l.file)
	}
	if len(errs) > 0 {
		return Config{}, errs
	}
	for name, p := range c.Providers {
		if p.NativeCompaction == "" {
			p.NativeCompaction = "auto"
			c.Providers[name] = p
		}
	}
	if dir != nil && *dir != "" {
		c.Storage.Dir = resolveDir(*dir, workspace)
	}
	return c, nil
}

// trust is what one file may set.
type trust interface {
	// userOnly returns why key (schema form, "providers.*.base_url") may not
	// be set by this file, or "".
	userOnly(schema string) string
	// storageDir returns why dir may not be this file's storage.dir, or "".
	storageDir(dir string) string
}

type userTrust struct{}

var trustUser trust = userTrust{}

func (userTrust) userOnly(string) string   { return "" }
func (userTrust) storageDir(string) string { return "" }

// trustWorkspace is a file inside the workspace: untrusted input.
type trustWorkspace struct{ userFile string }

func (t trustWorkspace) userOnly(schema string) string {
	what, ok := UserOnlyKeys[schema]
	if !ok {
		return ""
	}
	user := t.userFile
	if user == "" {
		user = "~/.config/vtcode/vtcode.toml"
	}
	return fmt.Sprintf("ignored: a workspace file may not set %s (set it in the user configuration %s)", what, user)
}

func (t trustWorkspace) storageDir(dir string) string {
	if dir == "" {
		return ""
	}
	if filepath.IsAbs(dir) || rooted(dir) || dir == "~" || strings.HasPrefix(dir, "~/") || strings.HasPrefix(dir, `~\`) || filepath.VolumeName(dir) != "" {
		return "ignored: a workspace file may set only a relative folder inside the workspace (set an absolute one in the user configuration)"
	}
	if !filepath.IsLocal(dir) {
		return "ignored: the folder leaves the workspace"
	}
	return ""
}

// resolveDir makes a storage.dir absolute: "~" is the home folder, a
// relative folder is inside the workspace. On Windows a folder rooted
// without a drive ("/var/vtcode", `\vtcode`) is on the workspace's drive, as
// Windows resolves it, not inside the workspace.
func resolveDir(dir, workspace string) string {
	if dir == "~" || strings.HasPrefix(dir, "~/") || filepath.Separator == '\\' && strings.HasPrefix(dir, `~\`) {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, dir[1:])
		}
	}
	if rooted(dir) && !filepath.IsAbs(dir) {
		dir = filepath.VolumeName(workspace) + dir
	}
	if !filepath.IsAbs(dir) && workspace != "" {
		dir = filepath.Join(workspace, dir)
	}
	return filepath.Clean(dir)
}

// rooted reports whether dir starts at the root of a drive or of the file
// system: "/x", and `\x` on Windows.
func rooted(dir string) bool {
	return dir != "" && os.IsPathSeparator(dir[0]) && filepath.VolumeName(dir) == ""
}

func bound(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// tables lists the keys each TOML table accepts; "providers.*" stands for
// every provider table.
var tables = func() map[string]map[string]bool {
	t := map[string]map[string]bool{}
	add := func(table string, keys ...string) {
		if t[table] == nil {
			t[table] = map[string]bool{}
		}
		for _, k := range keys {
			t[table][k] = true
		}
	}
	add("", "agent", "context", "compaction", "providers", "models", "storage", "proxy", "daemon")
	add("daemon", "idle")
	add("proxy", "listen", "allow_remote", "secret_env", "allowed_origins", "summarizer")
	add("agent", "harness")
	add("agent.harness", "tool_result_clearing")
	add("compaction", "summarizer", "route_policy", "routes", "pin", "writer")
	add("compaction.summarizer", "provider", "model")
	add("compaction.routes", "provider", "model", "agent", "threshold_ratio", "retain_ratio", "max_overflow_retries")
	add("providers", "*")
	add("providers.*", "base_url", "api_key_env", "native_compaction", "supports_context_edits")
	add("models", "provider", "model", "context_window", "max_output_tokens")
	add("storage", "dir", "keep_artifacts")
	add("models", "cache_read_multiplier", "cache_write_multiplier", "cache_ttl_seconds")
	add("models", "input_price", "cache_read_price", "cache_write_price", "cache_write_1h_price", "output_price",
		"price_tier_tokens", "price_tier_input_multiplier", "price_tier_output_multiplier", "prices_as_of")
	add("storage", "dir")
	for _, f := range policyFields {
		i := strings.LastIndexByte(f.toml, '.')
		add(f.toml[:i], f.toml[i+1:])
	}
	return t
}()

// lenient are the tables vtcode-ls shares with VT Code's own vtcode.toml:
// keys it does not know there belong to VT Code and are ignored. Every table
// that only vtcode-ls reads is strict, so a typo there is reported.
var lenient = map[string]bool{"": true, "agent": true, "agent.harness": true, "context": true, "compaction": true, "providers.*": true}

// arrayTables are the tables that appear as arrays of tables.
var arrayTables = map[string]bool{"compaction.routes": true, "models": true}

// decoder collects the errors of one file.
type decoder struct {
	file  string
	pos   keyIndex
	trust trust
	errs  []*FileError
	warns []*FileError
}

// warn records an ignored key.
func (d *decoder) warn(key []string, index int, msg string) {
	d.warns = append(d.warns, &FileError{File: d.file, Line: d.pos.line(key, index), Msg: toml.Key(key).String() + ": " + msg})
}

// allowed reports whether this file may set key (schema form), recording a
// warning when it may not.
func (d *decoder) allowed(schema string, key []string) bool {
	if msg := d.trust.userOnly(schema); msg != "" {
		d.warn(key, -1, msg)
		return false
	}
	return true
}

func (d *decoder) fail(key []string, index int, msg string) {
	d.errs = append(d.errs, &FileError{File: d.file, Line: d.pos.line(key, index), Msg: toml.Key(key).String() + ": " + msg})
}

// sub returns key+k without aliasing key.
func sub(key []string, k ...string) []string {
	return append(append(make([]string, 0, len(key)+len(k)), key...), k...)
}

// checkKeys reports unknown keys and tables of the wrong shape under m, the
// table at key whose schema name is schema; index is the array-table entry.
func (d *decoder) checkKeys(m map[string]any, key []string, schema string, index int) {
	allowed := tables[schema]
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		name := k
		if allowed["*"] {
			name = "*"
		}
		if !allowed[name] {
			secret := schema == "providers.*" && strings.Contains(strings.ToLower(k), "key")
			if lenient[schema] && !secret {
				continue // VT Code's own setting
			}
			msg := "unknown key"
			if secret {
				msg = "unknown key (API keys are never read from files: set api_key_env to the name of an environment variable)"
			}
			d.fail(sub(key, k), index, msg)
			continue
		}
		childSchema := name
		if schema != "" {
			childSchema = schema + "." + name
		}
		if _, isTable := tables[childSchema]; !isTable {
			continue // a value; checked when applied
		}
		if arrayTables[childSchema] {
			entries, ok := tableArray(m[k])
			if !ok {
				d.fail(sub(key, k), index, "must be an array of tables")
				continue
			}
			for i, e := range entries {
				d.checkKeys(e, sub(key, k), childSchema, i)
			}
			continue
		}
		t, ok := m[k].(map[string]any)
		if !ok {
			d.fail(sub(key, k), index, "must be a table")
			continue
		}
		d.checkKeys(t, sub(key, k), childSchema, index)
	}
}

// tableArray returns v as a list of tables, from [[x]] or x = [{...}].
func tableArray(v any) ([]map[string]any, bool) {
	switch v := v.(type) {
	case []map[string]any:
		return v, true
	case []any:
		out := make([]map[string]any, len(v))
		for i, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			out[i] = m
		}
		return out, true
	}
	return nil, false
}

// tableAt returns the table at path, or nil if absent or not a table.
func tableAt(m map[string]any, path ...string) map[string]any {
	for _, k := range path {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

// value converts t[k] with r; ok is false when absent or invalid (reported).
func (d *decoder) value(t map[string]any, key []string, k string, index int, r rule) (any, bool) {
	v, present := t[k]
	if !present {
		return nil, false
	}
	out, msg := r.convert(v)
	if msg != "" {
		d.fail(sub(key, k), index, msg)
		return nil, false
	}
	return out, true
}

func (d *decoder) str(t map[string]any, key []string, k string, index int, r rule) (*string, bool) {
	v, ok := d.value(t, key, k, index, r)
	if !ok {
		return nil, false
	}
	s := v.(string)
	return &s, true
}

func (d *decoder) integer(t map[string]any, key []string, k string, index int, r rule) *int {
	v, ok := d.value(t, key, k, index, r)
	if !ok {
		return nil
	}
	n := v.(int)
	return &n
}

func (d *decoder) float(t map[string]any, key []string, k string, index int, r rule) *float64 {
	v, ok := d.value(t, key, k, index, r)
	if !ok {
		return nil
	}
	f := v.(float64)
	return &f
}

// Bounds of compaction.pin: a summary carries it whole.
const (
	maxPins     = 16
	maxPinBytes = 4 << 10
)

// pin reads compaction.pin: a list of non-empty strings, each at most
// maxPinBytes, at most maxPins of them.
func (d *decoder) pin(raw map[string]any) []string {
	t := tableAt(raw, "compaction")
	if t == nil {
		return nil
	}
	v, ok := t["pin"]
	if !ok {
		return nil
	}
	key := []string{"compaction", "pin"}
	list, ok := v.([]any)
	if !ok {
		d.fail(key, -1, "must be a list of strings")
		return nil
	}
	if len(list) > maxPins {
		d.fail(key, -1, fmt.Sprintf("at most %d entries", maxPins))
		return nil
	}
	var out []string
	for _, e := range list {
		s, ok := e.(string)
		switch {
		case !ok:
			d.fail(key, -1, "must be a list of strings")
			return nil
		case strings.TrimSpace(s) == "":
			d.fail(key, -1, "an entry is empty")
			return nil
		case len(s) > maxPinBytes:
			d.fail(key, -1, fmt.Sprintf("an entry is longer than %d bytes", maxPinBytes))
			return nil
		}
		out = append(out, s)
	}
	return out
}

// decodeLayer applies one file, read with trust t, to c. It returns the
// storage.dir the file sets, if any, or every problem of the file; on error c
// is left unchanged.
func decodeLayer(file string, src []byte, c *Config, t trust) (dir *string, errs []*FileError) {
	raw, perr := parseFile(file, src)
	if perr != nil {
		return nil, []*FileError{perr}
	}
	d := &decoder{file: file, pos: scanKeys(src), trust: t}
	d.checkKeys(raw, nil, "", -1)

	// Each table is decoded onto a copy of what the earlier layers set, so
	// that a file with an error changes nothing.
	policy := d.policy(raw, c.Policy)
	summarizer := d.summarizer(raw, c.Summarizer)
	routes := d.routes(raw)
	providers := d.providers(raw, c.Providers)
	models := d.models(raw, c.Models)
	dir, keep := d.storage(raw)
	px := c.Proxy
	d.decodeProxy(raw, &px)
	dm := c.Daemon
	d.decodeDaemon(raw, &dm)
	pin := d.pin(raw)
	writer := d.writer(raw, c.Writer)

	if len(d.errs) > 0 {
		sortByLine(d.errs)
		return nil, d.errs
	}
	sortByLine(d.warns)
	c.Warnings = append(c.Warnings, d.warns...)
	c.Policy = policy
	c.Summarizer = summarizer
	c.Writer = writer
	for _, p := range pin {
		if !slices.Contains(c.Pin, p) {
			c.Pin = append(c.Pin, p)
		}
	}
	c.Routes = append(routes, c.Routes...) // this layer's routes take precedence
	c.Providers = providers
	c.Models = models
	if keep != nil {
		c.Storage.KeepArtifacts = *keep
	}
	c.Proxy = px
	c.Daemon = dm
	return dir, nil
}

// parseFile decodes the TOML of file into its tables, or reports the
// syntax error at its line.
func parseFile(file string, src []byte) (map[string]any, *FileError) {
	var raw map[string]any
	if _, err := toml.Decode(string(src), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			msg := pe.Message
			if pe.LastKey != "" {
				msg = pe.LastKey + ": " + msg
			}
			return nil, &FileError{File: file, Line: pe.Position.Line, Msg: bound(msg)}
		}
		return nil, &FileError{File: file, Msg: bound(err.Error())}
	}
	return raw, nil
}

// policy applies the policy keys of raw ([policyFields]) to base.
func (d *decoder) policy(raw map[string]any, base Policy) Policy {
	for i := range policyFields {
		f := &policyFields[i]
		path := strings.Split(f.toml, ".")
		tkey, k := path[:len(path)-1], path[len(path)-1]
		if t := tableAt(raw, tkey...); t != nil {
			if v, ok := d.value(t, tkey, k, -1, f.rule); ok {
				f.set(&base, v)
			}
		}
	}
	return base
}

// summarizer applies [compaction.summarizer] to base.
func (d *decoder) summarizer(raw map[string]any, base Summarizer) Summarizer {
	t := tableAt(raw, "compaction", "summarizer")
	if t == nil {
		return base
	}
	key := []string{"compaction", "summarizer"}
	if s, ok := d.str(t, key, "provider", -1, ruleString); ok {
		base.Provider = *s
	}
	if s, ok := d.str(t, key, "model", -1, ruleString); ok {
		base.Model = *s
	}
	return base
}

// routes reads the [[compaction.routes]] entries of raw, in file order.
func (d *decoder) routes(raw map[string]any) []RouteOverride {
	t := tableAt(raw, "compaction")
	if t == nil {
		return nil
	}
	var routes []RouteOverride
	entries, _ := tableArray(t["routes"])
	key := []string{"compaction", "routes"}
	for i, e := range entries {
		var r RouteOverride
		if s, ok := d.str(e, key, "provider", i, ruleString); ok {
			r.Provider = *s
		}
		if s, ok := d.str(e, key, "model", i, ruleString); ok {
			r.Model = *s
		}
		if s, ok := d.str(e, key, "agent", i, ruleString); ok {
			r.Agent = *s
		}
		r.ThresholdRatio = d.float(e, key, "threshold_ratio", i, ruleRatio)
		r.RetainRatio = d.float(e, key, "retain_ratio", i, ruleUnit)
		r.MaxOverflowRetries = d.integer(e, key, "max_overflow_retries", i, ruleNonNeg)
		routes = append(routes, r)
	}
	return routes
}

// providers applies the [providers.<name>] tables of raw, key by key, to a
// copy of base.
func (d *decoder) providers(raw map[string]any, base map[string]ProviderConfig) map[string]ProviderConfig {
	providers := make(map[string]ProviderConfig, len(base))
	for name, p := range base {
		providers[name] = p
	}
	t := tableAt(raw, "providers")
	for name, v := range t {
		pt, ok := v.(map[string]any)
		if !ok {
			continue // reported by checkKeys
		}
		key := []string{"providers", name}
		p := providers[name]
		if s, ok := d.str(pt, key, "base_url", -1, ruleString); ok && d.allowed("providers.*.base_url", sub(key, "base_url")) {
			p.BaseURL = *s
		}
		if s, ok := d.str(pt, key, "api_key_env", -1, ruleString); ok && d.allowed("providers.*.api_key_env", sub(key, "api_key_env")) {
			p.APIKeyEnv = *s
		}
		if s, ok := d.str(pt, key, "native_compaction", -1, ruleNative); ok {
			p.NativeCompaction = *s
		}
		if v, ok := d.value(pt, key, "supports_context_edits", -1, ruleBool); ok {
			b := v.(bool)
			p.SupportsContextEdits = &b
		}
		providers[name] = p
	}
	return providers
}

// modelKeys is one [[models]] entry as read: nil for a key it does not set.
type modelKeys struct {
	window, output, cacheTTL, tierTokens   *int
	cacheRead, cacheWrite, tierIn, tierOut *float64
	prices                                 [5]*float64 // input, cache read, cache write, cache write 1h, output
	asOf                                   *string
}

// modelPriceKeys are the keys of modelKeys.prices, in order.
var modelPriceKeys = [...]string{"input_price", "cache_read_price", "cache_write_price", "cache_write_1h_price", "output_price"}

// models applies the [[models]] entries of raw to a copy of base: an entry
// for a provider and model base has replaces its keys one by one, another
// one is added.
func (d *decoder) models(raw map[string]any, base []ModelEntry) []ModelEntry {
	models := append([]ModelEntry(nil), base...)
	entries, ok := tableArray(raw["models"])
	if !ok {
		return models
	}
	key := []string{"models"}
	for i, e := range entries {
		provider, okP := d.str(e, key, "provider", i, ruleString)
		model, okM := d.str(e, key, "model", i, ruleString)
		k := d.modelKeys(e, key, i)
		if !okP || *provider == "" {
			if _, present := e["provider"]; !present || okP {
				d.fail(sub(key, "provider"), i, "must be set")
			}
			continue
		}
		if !okM || *model == "" {
			if _, present := e["model"]; !present || okM {
				d.fail(sub(key, "model"), i, "must be set")
			}
			continue
		}
		j := slices.IndexFunc(models, func(m ModelEntry) bool { return m.Provider == *provider && m.Model == *model })
		if j < 0 {
			j = len(models)
			models = append(models, ModelEntry{Provider: *provider, Model: *model})
		}
		k.applyTo(&models[j])
	}
	return models
}

// modelKeys reads the keys of [[models]] entry i (e) other than provider and
// model.
func (d *decoder) modelKeys(e map[string]any, key []string, i int) modelKeys {
	k := modelKeys{
		window:     d.integer(e, key, "context_window", i, rulePositive),
		output:     d.integer(e, key, "max_output_tokens", i, rulePositive),
		cacheRead:  d.float(e, key, "cache_read_multiplier", i, ruleMultiplier),
		cacheWrite: d.float(e, key, "cache_write_multiplier", i, ruleMultiplier),
		cacheTTL:   d.integer(e, key, "cache_ttl_seconds", i, rulePositive),
	}
	for p, name := range modelPriceKeys {
		k.prices[p] = d.float(e, key, name, i, rulePrice)
	}
	k.tierTokens = d.integer(e, key, "price_tier_tokens", i, rulePositive)
	k.tierIn = d.float(e, key, "price_tier_input_multiplier", i, ruleMultiplier)
	k.tierOut = d.float(e, key, "price_tier_output_multiplier", i, ruleMultiplier)
	k.asOf, _ = d.str(e, key, "prices_as_of", i, ruleString)
	return k
}

// applyTo sets the keys k holds on m.
func (k *modelKeys) applyTo(m *ModelEntry) {
	set(&m.ContextWindow, k.window)
	set(&m.MaxOutputTokens, k.output)
	set(&m.CacheRead, k.cacheRead)
	set(&m.CacheWrite, k.cacheWrite)
	set(&m.CacheTTLSeconds, k.cacheTTL)
	for p, dst := range []*float64{&m.InputPrice, &m.CacheReadPrice, &m.CacheWritePrice, &m.CacheWrite1hPrice, &m.OutputPrice} {
		set(dst, k.prices[p])
	}
	set(&m.PriceTierTokens, k.tierTokens)
	set(&m.PriceTierInput, k.tierIn)
	set(&m.PriceTierOutput, k.tierOut)
	set(&m.PricesAsOf, k.asOf)
}

// set stores *v in dst when a key gave v.
func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// storage reads [storage]: the folder this file may set (nil when it sets
// none or its trust does not allow it) and keep_artifacts.
func (d *decoder) storage(raw map[string]any) (dir *string, keep *int) {
	st := tableAt(raw, "storage")
	if st == nil {
		return nil, nil
	}
	dir, _ = d.str(st, []string{"storage"}, "dir", -1, ruleString)
	if dir != nil {
		if msg := d.trust.storageDir(*dir); msg != "" {
			d.warn([]string{"storage", "dir"}, -1, msg)
			dir = nil
		}
	}
	return dir, d.integer(st, []string{"storage"}, "keep_artifacts", -1, ruleNonNeg)
}

// writer applies compaction.writer to base.
func (d *decoder) writer(raw map[string]any, base string) string {
	t := tableAt(raw, "compaction")
	if t == nil {
		return base
	}
	if w, ok := d.str(t, []string{"compaction"}, "writer", -1, ruleString); ok {
		switch *w {
		case "offline", "model", "auto":
			return *w
		default:
			d.fail([]string{"compaction", "writer"}, -1, `must be "offline", "model" or "auto"`)
		}
	}
	return base
}

// sortByLine orders the problems of one file by line, unknown lines last.
func sortByLine(es []*FileError) {
	sort.SliceStable(es, func(i, j int) bool {
		li, lj := es[i].Line, es[j].Line
		if li == 0 || lj == 0 {
			return lj == 0 && li != 0
		}
		return li < lj
	})
}
