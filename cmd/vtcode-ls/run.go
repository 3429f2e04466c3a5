package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/vtcode/vtcode-ls/daemon"
	"github.com/vtcode/vtcode-ls/session"
)

// runUsage is the help of vtcode-ls run, before its flags.
const runUsage = `usage: vtcode-ls run [--workspace DIR] [--env NAME] [--] AGENT [ARGS...]

Run a coding agent with its provider base URL pointed at the shared
daemon's proxy, under a path naming the workspace, so its sessions are
sessions of that workspace in every editor window (the daemon is started
when none runs). Nothing is written to disk and no credential is added:
the agent's own keys pass through as usual.

Agents known by name: claude (ANTHROPIC_BASE_URL), codex (-c overrides
for a "vtcode" model provider, wire_api "responses", key from
OPENAI_API_KEY), opencode (OPENCODE_CONFIG_CONTENT: the anthropic and
openai providers' baseURL), qwen (OPENAI_BASE_URL), gemini
(GOOGLE_GEMINI_BASE_URL). Any other AGENT needs --env NAME.

Flags:
`

// runMain starts a coding agent pointed at the shared daemon's proxy for a
// workspace: vtcode-ls run [--workspace DIR] [--env NAME] [--] AGENT
// [ARGS...]. The agent runs in the foreground with this process's
// terminal; its exit code is the command's.
func runMain(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("run", runUsage, stderr)
	workspace := fs.String("workspace", "", "the workspace `dir` of the agent's sessions (default: the nearest folder upwards holding vtcode.toml, .vtcode or .git, else the current folder)")
	var envs multiFlag
	fs.Var(&envs, "env", "also set environment variable `name` to the proxy's base URL (repeatable; for agents vtcode-ls does not know)")
	// Flags stop at the agent: everything after it is the agent's.
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		if !strings.Contains(args[i], "=") && (args[i] == "--workspace" || args[i] == "-workspace" || args[i] == "--env" || args[i] == "-env") {
			i++
		}
		i++
	}
	if code, done := parseFlags(fs, args[:min(i, len(args))], stdout); done {
		return code
	}
	rest := args[min(i, len(args)):]
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		fmt.Fprintln(stderr, "vtcode-ls run: name the agent to run, e.g. vtcode-ls run claude")
		return 2
	}
	if !daemon.Supported {
		fmt.Fprintln(stderr, "vtcode-ls run: needs the shared daemon, which this platform does not have; run vtcode-ls proxy and point the agent at it")
		return 2
	}
	agent, agentArgs := rest[0], rest[1:]
	for _, name := range envs {
		if !validEnvName(name) {
			fmt.Fprintf(stderr, "vtcode-ls run: --env %q is not an environment variable name\n", name)
			return 2
		}
	}
	kind := agentKind(agent)
	if kind == "" && len(envs) == 0 {
		fmt.Fprintf(stderr, "vtcode-ls run: %s is not an agent vtcode-ls knows (claude, codex, opencode, qwen, gemini): pass --env NAME for the variable that holds its base URL\n", agent)
		return 2
	}
	root, err := runWorkspace(*workspace)
	if err != nil {
		fmt.Fprintf(stderr, "vtcode-ls run: %v\n", err)
		return 2
	}
	path, err := exec.LookPath(agent)
	if err != nil {
		fmt.Fprintf(stderr, "vtcode-ls run: %v\n", err)
		return 127
	}
	hold, st, err := holdDaemon(getenv, root)
	if err != nil {
		fmt.Fprintf(stderr, "vtcode-ls run: shared daemon: %v\n", err)
		return 1
	}
	if st.Proxy == "" {
		hold.Close()
		fmt.Fprintf(stderr, "vtcode-ls run: the shared daemon's proxy is not listening: %s\n", st.ProxyError)
		return 1
	}
	ctx, stopHold := context.WithCancel(context.Background())
	defer stopHold()
	go keepDaemon(ctx, hold, root, st.Proxy, getenv, stderr)
	base := "http://" + st.Proxy + hold.ProxyBase
	env, extra, notes, err := agentSetup(kind, base, envs, os.Environ())
	if err != nil {
		fmt.Fprintf(stderr, "vtcode-ls run: %v\n", err)
		return 2
	}
	for _, n := range notes {
		fmt.Fprintln(stderr, "vtcode-ls run: "+n)
	}
	return runChild(path, append(extra, agentArgs...), env, stdin, stdout, stderr)
}

// holdDaemon makes sure the shared daemon runs (starting it) and holds it,
// with workspace among its workspaces: it stays while the returned
// connection is open.
func holdDaemon(getenv func(string) string, workspace string) (*daemon.Held, *daemon.Status, error) {
	socket, err := daemon.SocketPath(getenv)
	if err != nil {
		return nil, nil, err
	}
	start, err := startDaemon(getenv)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	h, err := daemon.EnsureHold(ctx, socket, workspace, start)
	if err != nil {
		return nil, nil, err
	}
	st, err := daemon.GetStatus(ctx, socket)
	if err != nil {
		h.Close()
		return nil, nil, err
	}
	return h, st, nil
}

// keepDaemon holds the shared daemon while the agent runs. When the daemon
// goes away (killed), it starts a new one at once, so the agent's next
// request finds the proxy again (on the same address when it is a fixed
// one, the default 127.0.0.1:8787), and the sessions resume there.
func keepDaemon(ctx context.Context, hold *daemon.Held, workspace, addr string, getenv func(string) string, stderr io.Writer) {
	for {
		stop := context.AfterFunc(ctx, func() { hold.Close() })
		_, _ = io.Copy(io.Discard, hold)
		stop()
		hold.Close()
		if ctx.Err() != nil {
			return
		}
		fmt.Fprintln(stderr, "vtcode-ls run: the shared daemon went away; starting a new one")
		for {
			h, st, err := holdDaemon(getenv, workspace)
			if err == nil {
				if st.Proxy != addr {
					fmt.Fprintf(stderr, "vtcode-ls run: the new daemon's proxy listens on %s, not on %s the agent was given (set [proxy] listen to a fixed address)\n", st.Proxy, addr)
				}
				hold = h
				break
			}
			fmt.Fprintf(stderr, "vtcode-ls run: restarting the shared daemon: %v\n", err)
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

// runWorkspace resolves the workspace of run: the folder given, else the
// nearest folder upwards from the current one holding a root marker (as
// the editors pick it), else the current folder.
func runWorkspace(dir string) (string, error) {
	if dir != "" {
		return session.WorkspaceRoot(dir)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := cwd; ; {
		for _, m := range []string{"vtcode.toml", ".vtcode", ".git"} {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return session.WorkspaceRoot(d)
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return session.WorkspaceRoot(cwd)
}

// agentKind names the agent by its command's file name, "" for one
// vtcode-ls does not know.
func agentKind(agent string) string {
	name := strings.ToLower(strings.TrimSuffix(filepath.Base(agent), filepath.Ext(agent)))
	switch name {
	case "claude", "claude-code":
		return "claude"
	case "codex":
		return "codex"
	case "opencode":
		return "opencode"
	case "qwen", "qwen-code":
		return "qwen"
	case "gemini":
		return "gemini"
	}
	return ""
}

// agentSetup returns the agent's environment (environ with the base URL
// variables set), the arguments to put before the user's, and notes for
// the user (a base URL variable that was set and is replaced). It adds no
// credential.
func agentSetup(kind, base string, envs []string, environ []string) (env, args, notes []string, err error) {
	set := map[string]string{}
	switch kind {
	case "claude":
		set["ANTHROPIC_BASE_URL"] = base
	case "qwen":
		set["OPENAI_BASE_URL"] = base + "/v1"
	case "gemini":
		set["GOOGLE_GEMINI_BASE_URL"] = base
	case "codex":
		args = []string{
			"-c", `model_provider="vtcode"`,
			"-c", `model_providers.vtcode.name="vtcode-ls"`,
			"-c", "model_providers.vtcode.base_url=" + tomlString(base+"/v1"),
			"-c", `model_providers.vtcode.wire_api="responses"`,
			"-c", `model_providers.vtcode.env_key="OPENAI_API_KEY"`,
			"-c", `model_providers.vtcode.supports_websockets=false`,
		}
	case "opencode":
		content, err := opencodeConfig(lookup(environ, "OPENCODE_CONFIG_CONTENT"), base+"/v1")
		if err != nil {
			return nil, nil, nil, err
		}
		set["OPENCODE_CONFIG_CONTENT"] = content
	}
	for _, name := range envs {
		set[name] = base
	}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if nv, ok := set[k]; ok {
			if k != "OPENCODE_CONFIG_CONTENT" && v != "" && v != nv {
				// The old value is not printed: a URL may carry a credential.
				notes = append(notes, fmt.Sprintf("%s was set; it now points at the proxy, which forwards to the [providers.*] base_url of the configuration", k))
			}
			continue
		}
		env = append(env, kv)
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env, args, notes, nil
}

// opencodeConfig merges the base URL of the anthropic and openai providers
// into opencode's inline configuration (the user's own, if any).
func opencodeConfig(existing, baseURL string) (string, error) {
	cfg := map[string]any{}
	if strings.TrimSpace(existing) != "" {
		if err := json.Unmarshal([]byte(existing), &cfg); err != nil {
			return "", fmt.Errorf("OPENCODE_CONFIG_CONTENT is not a JSON object: %w", err)
		}
	}
	providers, _ := cfg["provider"].(map[string]any)
	if providers == nil {
		providers = map[string]any{}
	}
	for _, name := range []string{"anthropic", "openai"} {
		p, _ := providers[name].(map[string]any)
		if p == nil {
			p = map[string]any{}
		}
		opts, _ := p["options"].(map[string]any)
		if opts == nil {
			opts = map[string]any{}
		}
		opts["baseURL"] = baseURL
		p["options"] = opts
		providers[name] = p
	}
	cfg["provider"] = providers
	b, err := json.Marshal(cfg)
	return string(b), err
}

func lookup(environ []string, name string) string {
	for _, kv := range environ {
		if k, v, _ := strings.Cut(kv, "="); k == name {
			return v
		}
	}
	return ""
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	b, _ := json.Marshal(s) // JSON string escapes are valid TOML ones
	return string(b)
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// runChild runs the agent as a child process on this process's terminal:
// its exit code is returned (128+n after signal n), and the signals this
// process receives are passed on to it, except those a terminal sends its
// whole foreground group (the agent has them already).
func runChild(path string, args, env []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := exec.Command(path, args...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, stdin, stdout, stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, forwardedSignals...)
	fromTerminal := terminalSignals(stdin)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "vtcode-ls run: %v\n", err)
		return 126
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				if !fromTerminal[sig] {
					_ = cmd.Process.Signal(sig)
				}
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	return exitCode(cmd.ProcessState, err)
}
