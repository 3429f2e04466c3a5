package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/proxy"
	"github.com/vtcode/vtcode-ls/session"
)

// proxyMain runs the proxy on its own: vtcode-ls proxy [--listen ADDR]
// [--workspace DIR] [--config FILE] [--allow-remote] [--secret-env NAME].
// Its first line on stderr is "vtcode-ls proxy listening on
// http://HOST:PORT".
// proxyOptions are the flags of vtcode-ls proxy.
type proxyOptions struct {
	listen, workspace, cfgFile, secretEnv, logFile string
	allowRemote                                    bool
}

func proxyMain(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	var o proxyOptions
	fs := proxyFlags(&o, stderr)
	if code, done := parseNoArgs(fs, args, stdout, stderr); done {
		return code
	}
	ws, user, err := o.resolve()
	if err != nil {
		return fail(stderr, "proxy", err)
	}
	logger, closeLog, err := openLogger(o.logFile, stderr)
	if err != nil {
		return fail(stderr, "proxy", err)
	}
	defer closeLog()
	mgr := session.NewManager(session.Options{Logger: logger, UserConfig: user, Clients: clientFactoryEnv(logger, getenv),
		Notifier: logNotifier{logger}, Registry: registryFile(getenv)})
	defer mgr.Close()
	if err := mgr.AddWorkspace(ws, nil); err != nil {
		return fail(stderr, "proxy", usageError("workspace: %v", err))
	}
	px, err := o.settings(mgr)
	if err != nil {
		return fail(stderr, "proxy", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, srv, err := startProxy(mgr, px, logger, getenv)
	if err != nil {
		return fail(stderr, "proxy", usageError("%v", err))
	}
	defer srv.Handler.(*proxy.Server).Close() // the answers passed on are recorded before the manager closes
	fmt.Fprintf(stderr, "vtcode-ls proxy listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fail(stderr, "proxy", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	return 0
}

// proxyUsage is the help of vtcode-ls proxy, before its flags.
const proxyUsage = `usage: vtcode-ls proxy [--listen ADDR] [--workspace DIR] [--config FILE] [--allow-remote] [--secret-env NAME]

Run the engine as a local HTTP proxy speaking the providers' own APIs
(Anthropic Messages, OpenAI Responses, chat completions), for coding agents
pointed at it with their base-URL setting, e.g.
  ANTHROPIC_BASE_URL=http://127.0.0.1:8787 claude
Upstreams are the [providers.*] base_url of the configuration.

Flags:
`

// proxyFlags is the flag set of vtcode-ls proxy, filling o.
func proxyFlags(o *proxyOptions, stderr io.Writer) *flag.FlagSet {
	fs := newFlags("proxy", proxyUsage, stderr)
	fs.StringVar(&o.listen, "listen", "", "listen on `addr` (default [proxy] listen, else "+proxy.DefaultListen+"; :0 picks a port)")
	fs.StringVar(&o.workspace, "workspace", "", "the workspace `dir` whose sessions and configuration the proxy uses (default: the current folder)")
	fs.StringVar(&o.cfgFile, "config", "", "the user configuration `file` (default ~/.config/vtcode/vtcode.toml)")
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "allow a --listen address that is not loopback")
	fs.StringVar(&o.secretEnv, "secret-env", "", "require the shared secret held by environment variable `name` in the "+proxy.SecretHeader+" header")
	fs.StringVar(&o.logFile, "log-file", "", "write the log to `file` (appending) instead of stderr")
	return fs
}

// resolve returns the workspace folder (default: the current one) and the
// user configuration file.
func (o *proxyOptions) resolve() (ws, user string, err error) {
	ws = o.workspace
	if ws == "" {
		if ws, err = os.Getwd(); err != nil {
			return "", "", err
		}
	}
	user = o.cfgFile
	if user == "" {
		user = userConfigFile()
	} else if _, err := os.Stat(user); err != nil {
		return "", "", usageError("--config: %v", err)
	}
	return ws, user, nil
}

// settings are the proxy settings: the workspace's [proxy] table under the
// flags, with what only the user may set (remote hosts, web origins) from
// the user's configuration.
func (o *proxyOptions) settings(mgr *session.Manager) (config.Proxy, error) {
	cfg, err := mgr.WorkspaceConfig("")
	if err != nil {
		return config.Proxy{}, err
	}
	userCfg, err := mgr.UserConfig()
	if err != nil {
		return config.Proxy{}, err
	}
	px := cfg.Proxy
	if o.listen != "" {
		px.Listen = o.listen
	}
	if px.Listen == "" {
		px.Listen = proxy.DefaultListen
	}
	// Only the user may open the proxy to other hosts or web pages, never a
	// workspace file.
	px.AllowRemote = userCfg.Proxy.AllowRemote || o.allowRemote
	px.AllowedOrigins = userCfg.Proxy.AllowedOrigins
	if o.secretEnv != "" {
		px.SecretEnv = o.secretEnv
	}
	return px, nil
}

// startProxy checks the [proxy] settings and listens.
func startProxy(mgr *session.Manager, px config.Proxy, logger *slog.Logger, getenv func(string) string) (net.Listener, *http.Server, error) {
	if err := proxy.CheckListen(px.Listen, px.AllowRemote); err != nil {
		return nil, nil, err
	}
	secret := ""
	if px.SecretEnv != "" {
		if secret = getenv(px.SecretEnv); secret == "" {
			return nil, nil, fmt.Errorf("the shared secret variable %s is not set", px.SecretEnv)
		}
	}
	ln, err := net.Listen("tcp", px.Listen)
	if err != nil {
		return nil, nil, fmt.Errorf("listen: %w", err)
	}
	h := proxy.New(proxy.Options{Manager: mgr, Logger: logger.With("component", "proxy"), Secret: secret,
		Listen: px.Listen, AllowedOrigins: px.AllowedOrigins})
	return ln, proxy.NewHTTPServer(h, logger), nil
}

// attachProxy is the daemon's rpc.AttachFunc: it runs the proxy in-process
// when [proxy] listen (or initializationOptions.proxy.listen) is set, so
// proxied sessions are sessions of the editor's workspace. It reports the
// address on stderr and to the client (window/logMessage), and problems the
// same way; it stops with the connection.
func attachProxy(logger *slog.Logger, stderr io.Writer) func(ctx context.Context, mgr *session.Manager, init json.RawMessage) {
	return func(ctx context.Context, mgr *session.Manager, init json.RawMessage) {
		cfg, err := mgr.WorkspaceConfig("")
		if err != nil {
			return // no workspace: nothing to proxy for
		}
		user, err := mgr.UserConfig()
		if err != nil {
			return // reported when the workspace was added
		}
		// Only the user (user file, editor settings) may open the proxy to
		// other hosts, never a workspace file.
		base := cfg.Proxy
		base.AllowRemote, base.AllowedOrigins = user.Proxy.AllowRemote, user.Proxy.AllowedOrigins
		px, _, err := config.ProxyFromJSON(init, base)
		if err != nil || px.Listen == "" {
			return
		}
		ln, srv, err := startProxy(mgr, px, logger, os.Getenv)
		if err != nil {
			msg := "vtcode-ls proxy: not started: " + err.Error()
			fmt.Fprintln(stderr, msg)
			mgr.LogMessage(session.LevelError, msg)
			return
		}
		line := fmt.Sprintf("vtcode-ls proxy listening on http://%s", ln.Addr())
		fmt.Fprintln(stderr, line)
		mgr.LogMessage(session.LevelInfo, line)
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Warn("proxy stopped", "err", err)
			}
		}()
		context.AfterFunc(ctx, func() {
			_ = srv.Close()
			srv.Handler.(*proxy.Server).Close()
		})
	}
}

// logNotifier is the Notifier of the standalone proxy: everything goes to
// the log.
type logNotifier struct{ logger *slog.Logger }

func (n logNotifier) TokenPressure(ev session.PressureEvent) {
	n.logger.Debug("token pressure", "session", ev.SessionID, "projected", ev.ProjectedTokens, "state", ev.State)
}
func (n logNotifier) CompactBoundary(ev session.BoundaryEvent) {
	n.logger.Info("compacted", "session", ev.SessionID, "trigger", ev.Trigger, "from", ev.OriginalTokens, "to", ev.CompactedTokens)
}
func (n logNotifier) ShowMessage(level int, text string) { n.logger.Warn(text) }
func (n logNotifier) LogMessage(level int, text string)  { n.logger.Info(text) }
