// Package config holds the vtcode-ls configuration (docs/design.md §12) and the session
// policy with its JSON form (docs/design.md §10).
//
// A [Policy] is the part of the configuration a client may change at run time:
// auto compaction, tool-result clearing, context limits and the route policy.
// [Default] returns the built-in values and [ApplyJSON] applies a partial
// policy, as sent in initializationOptions or vtcode/setPolicy, rejecting
// unknown keys and bad values with a [*FieldError] that names the field
// ("policy.toolResultClearing.keepToolUses: must be >= 0").
//
// A [Config] adds what only files set: the summarizer route, route-policy
// overrides, provider tables, catalog corrections, the storage folder and
// the artifact retention (storage.keep_artifacts).
// [Load] merges, in order, the defaults, the user file
// (~/.config/vtcode/vtcode.toml) and the workspace file (<workspace>/vtcode.toml,
// or <workspace>/.vtcode/config.toml when that is absent). A file overrides only
// the keys it sets. Lists merge: a later file's [[compaction.routes]] come
// first (first match wins, so the workspace's routes take precedence), its
// [[models]] entries replace earlier entries for the same provider and model
// key by key, and its [providers.<name>] tables override key by key.
// vtcode.toml is also VT Code's own file, so keys vtcode-ls does not know are
// ignored in the tables the two share (the top level, [agent],
// [agent.harness], [context], [compaction], [providers.<name>]); in the tables
// only vtcode-ls reads they are errors. Unknown keys there, values of the
// wrong type and values out of range are errors
// ([*FileError], "vtcode.toml:7: context.trim_to_percent: must be between 1
// and 100"); a file with an error is not applied at all. Load reads every
// file and reports every problem ([Errors]), each with its file and line.
//
// The workspace file is untrusted input: it comes with the repository. The
// keys that pick a host or a secret ([UserOnlyKeys]: base_url and
// api_key_env of every [providers.<name>] table) are read only from the user
// file; in a workspace file they are ignored and reported in
// [Config.Warnings] with file and line, and the rest of the file applies. A
// workspace file thus chooses among the providers the user configured (or
// the built-in ones, at their official endpoints with their usual key
// variables), never where requests go or which credential they carry. Its
// storage.dir must be a relative path that stays inside the workspace
// (absolute, "~/" and "../" paths are ignored the same way).
//
// [Watch] reloads the configuration when the workspace or user file changes
// and reports either the new configuration or the error, so the caller can
// keep its last good one.
//
// API keys are never part of the configuration: a provider names the
// environment variable that holds its key (api_key_env).
package config
