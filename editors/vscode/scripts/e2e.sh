#!/usr/bin/env bash
# End-to-end test of the extension in a real VS Code (make test-e2e): code-server 4.139
# (VS Code 1.139) on Node 24, driven by Debian's chromium through playwright-core.
#  1. installs what is missing into $VTCODE_CACHE (editors/scripts/install-code-server.sh),
#  2. builds and packages the .vsix (prepare.sh) and the test agent extension,
#  3. installs both .vsix files into a fresh code-server profile (--install-extension),
#  4. runs the extension's own tests (test/host/index.cjs) in the real extension host
#     (code-server with --vscode-option enable-smoke-test-driver, on PORT+1),
#  5. UI test on a plain code-server (PORT): the test agent sends turns through the exported API,
#     "VT Code: Compact Context" runs from the command palette; the progress notification, the
#     result notification and the status-bar pressure before/after are asserted; screenshots.
#     The window attaches to the shared daemon (the default), which runs the proxy of the user
#     configuration ([proxy] listen): a scripted agent (test/e2e/fakeagent, against the fake
#     provider of proxy/proxytest) makes 30 tool turns through it, at the address and workspace
#     prefix `vtcode-ls status --json` reports.
#  6. two windows (workspaces A and B) of one more code-server on the same shared daemon, each
#     with its own agent started by `vtcode-ls run --workspace DIR`: each window's status bar
#     follows its own agent.
# Output (screenshots, page text, logs): editors/vscode/test-results/e2e/. Last line:
# "e2e: N passed, N failed".
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/../scripts/env.sh"
cd "$HERE"
PORT=${PORT:-$((20000 + RANDOM % 20000))}
SUITE=test-e2e
SUITE_HOW="make test-e2e as root (or with sudo without a password) on Debian 12, with its archive and the npm registry reachable"

rc=0; bash "$EDITORS_SCRIPTS/install-code-server.sh" >/dev/null || rc=$?
if [ "$rc" != 0 ]; then
  [ "$rc" = "$SUITE_CANNOT_INSTALL" ] && suite_unavailable "chromium and build libraries (apt-get), Node $NODE24_VERSION and code-server $CODE_SERVER_VERSION (npm), which could not be installed (see above)"
  exit "$rc"
fi
rc=0; VSIX=$(bash scripts/prepare.sh) || rc=$?
if [ "$rc" != 0 ]; then
  [ "$rc" = "$SUITE_CANNOT_INSTALL" ] && suite_unavailable "the extension's npm dependencies (see above)"
  exit "$rc"
fi
NODE=$NODE24_HOME/bin/node
CS_ENTRY=$CODE_SERVER_DIR/node_modules/code-server/out/node/entry.js
BIN=$(vtcode_ls_bin)
# the platform-specific package of this machine, with the daemon inside
case "$(uname -m)" in x86_64) HOST_TARGET=linux-x64 ;; aarch64 | arm64) HOST_TARGET=linux-arm64 ;; *) HOST_TARGET= ;; esac
PLATFORM_VSIX=
if [ -n "$HOST_TARGET" ]; then
  bash scripts/package-targets.sh "$HOST_TARGET" >&2
  PLATFORM_VSIX=$HERE/dist/vtcode-ls-$HOST_TARGET-$(node -p 'require("./package.json").version').vsix
fi

RUN=$HERE/test-results/e2e
rm -rf "$RUN"; mkdir -p "$RUN/out" "$RUN/ext" "$RUN/ext-bundled" "$RUN/ws-bundled" "$RUN/xdg/config/vtcode" "$RUN/xdg/data" "$RUN/xdg/cache" "$RUN/ws-ui" "$RUN/ws-tests" "$RUN/ws-a" "$RUN/ws-b"
printf '# e2e workspace\n' > "$RUN/ws-ui/README.md"; printf '# e2e host-test workspace\n' > "$RUN/ws-tests/README.md"
printf '# e2e shared workspace A\n' > "$RUN/ws-a/README.md"; printf '# e2e shared workspace B\n' > "$RUN/ws-b/README.md"
# the scripted agent and its fake provider (proxy/proxytest), built with the user's Go cache
(cd "$REPO_ROOT" && go build -o "$RUN/fakeagent" ./editors/vscode/test/e2e/fakeagent) >&2
export XDG_CONFIG_HOME=$RUN/xdg/config XDG_DATA_HOME=$RUN/xdg/data XDG_CACHE_HOME=$RUN/xdg/cache  # keep ~ clean
# The windows attach to a shared daemon of this run's own (a short folder: a socket path is
# bounded), stopped at the end; the bundled-daemon window gets another, which its binary starts.
# Windows opening at once race to start it; one wins, the others attach (daemon.Ensure).
DAEMONS=$(mktemp -d /tmp/vtcode-e2e-daemon.XXXXXX)
export VTCODE_DAEMON_DIR=$DAEMONS/shared VTCODE_DAEMON_IDLE=60s
# the shared daemon's proxy ([proxy] listen of the user configuration); the bundled-daemon
# window's own daemon gets another port (a user has one daemon: two would race for one port)
PROXY_PORT=$((PORT + 3)) BUNDLED_PROXY_PORT=$((PORT + 4))

# the test agent extension, with the shared session fixture
cp -r test/e2e/agent-ext "$RUN/agent-ext"; cp test/fixtures.cjs "$RUN/agent-ext/"
(cd "$RUN/agent-ext" && "$HERE/node_modules/.bin/vsce" package --no-dependencies --allow-missing-repository --skip-license \
   -o "$RUN/agent.vsix" >"$RUN/vsce-agent.log" 2>&1) || { cat "$RUN/vsce-agent.log"; exit 1; }

settings() { # user-data-dir; machine-scoped settings (vtcode.serverPath) of a remote window live in Machine/
  mkdir -p "$1/User" "$1/Machine"
  cat > "$1/User/settings.json" <<J
{ "security.workspace.trust.enabled": false, "workbench.startupEditor": "none",
  "telemetry.telemetryLevel": "off", "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false, "update.mode": "none", "workbench.tips.enabled": false,
  "chat.disableAIFeatures": true, "workbench.colorTheme": "Default Dark Modern", "files.hotExit": "off",
  "workbench.enableExperiments": false, "vtcode.serverPath": "$BIN", "vtcode.trace.server": "messages" }
J
  printf '{ "vtcode.serverPath": "%s" }\n' "$BIN" > "$1/Machine/settings.json"
  if [ "${2:-}" = bundled ]; then  # no vtcode.serverPath: the extension runs the daemon it ships
    sed -i 's#, "vtcode.serverPath": "[^"]*"##' "$1/User/settings.json"; echo '{}' > "$1/Machine/settings.json"
  fi
}
settings "$RUN/ud"; settings "$RUN/ud-tests"; settings "$RUN/ud-bundled" bundled; settings "$RUN/ud-shared"
printf '# e2e bundled-daemon workspace\n' > "$RUN/ws-bundled/README.md"
for v in "$VSIX" "$RUN/agent.vsix"; do
  "$NODE" "$CS_ENTRY" --user-data-dir "$RUN/ud" --extensions-dir "$RUN/ext" --install-extension "$v" >>"$RUN/install.log" 2>&1 \
    || { cat "$RUN/install.log"; exit 1; }
done
log "installed $(ls "$RUN/ext" | grep -v json | tr '\n' ' ')"
if [ -n "$PLATFORM_VSIX" ]; then
  for v in "$PLATFORM_VSIX" "$RUN/agent.vsix"; do
    "$NODE" "$CS_ENTRY" --user-data-dir "$RUN/ud-bundled" --extensions-dir "$RUN/ext-bundled" --install-extension "$v" >>"$RUN/install.log" 2>&1 \
      || { cat "$RUN/install.log"; exit 1; }
  done
  log "installed for the bundled-daemon check: $(ls "$RUN/ext-bundled" | grep -v json | tr '\n' ' ')"
fi
cp -r "$RUN/ext" "$RUN/ext-shared"

PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    local alive=0; for p in "${PIDS[@]}"; do kill -0 -- "-$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break; sleep 0.3
  done
  for p in "${PIDS[@]}"; do kill -KILL -- "-$p" 2>/dev/null || true; done
  for d in "$DAEMONS"/*; do VTCODE_DAEMON_DIR=$d "$BIN" stop >/dev/null 2>&1 || true; done
  rm -rf "$DAEMONS"
}
trap cleanup EXIT
start_cs() { # port user-data-dir workspace log extra-args... ($EXT_DIR: the extensions folder)
  local port=$1 ud=$2 ws=$3 logf=$4; shift 4
  setsid "$NODE" "$CS_ENTRY" --user-data-dir "$ud" --extensions-dir "${EXT_DIR:-$RUN/ext}" \
    --bind-addr "127.0.0.1:$port" --auth none --disable-telemetry --disable-update-check \
    --disable-workspace-trust "$@" "$ws" >"$logf" 2>&1 &
  PIDS+=($!)
}
wait_cs() {
  local i; for i in $(seq 1 240); do curl -fsS -o /dev/null "http://127.0.0.1:$1/healthz" 2>/dev/null && return 0; sleep 0.25; done
  echo "code-server on :$1 did not come up" >&2; cat "$RUN"/code-server*.log >&2; return 1
}
# the fake provider, until cleanup ends it
setsid "$RUN/fakeagent" upstream </dev/null >"$RUN/upstream.url" 2>"$RUN/upstream.log" &
PIDS+=($!)
for _ in $(seq 1 200); do [ -s "$RUN/upstream.url" ] && break; sleep 0.1; done
UPSTREAM=$(head -1 "$RUN/upstream.url"); [ -n "$UPSTREAM" ] || { cat "$RUN/upstream.log" >&2; exit 1; }
# the user configuration: the Anthropic provider is the fake one; the shared daemon's proxy (one
# for every window and agent of the user) listens on PROXY_PORT
printf '[providers.anthropic]\nbase_url = "%s"\n\n[proxy]\nlisten = "127.0.0.1:%s"\n' "$UPSTREAM" "$PROXY_PORT" > "$XDG_CONFIG_HOME/vtcode/vtcode.toml"
mkdir -p "$RUN/xdg-bundled/config/vtcode"
printf '[providers.anthropic]\nbase_url = "%s"\n\n[proxy]\nlisten = "127.0.0.1:%s"\n' "$UPSTREAM" "$BUNDLED_PROXY_PORT" > "$RUN/xdg-bundled/config/vtcode/vtcode.toml"
start_cs "$PORT" "$RUN/ud" "$RUN/ws-ui" "$RUN/code-server.log"
start_cs "$((PORT + 1))" "$RUN/ud-tests" "$RUN/ws-tests" "$RUN/code-server-tests.log" --vscode-option enable-smoke-test-driver
wait_cs "$PORT"; wait_cs "$((PORT + 1))"
bundled_args=()
if [ -n "$PLATFORM_VSIX" ]; then
  XDG_CONFIG_HOME=$RUN/xdg-bundled/config EXT_DIR=$RUN/ext-bundled VTCODE_DAEMON_DIR=$DAEMONS/bundled start_cs "$((PORT + 2))" "$RUN/ud-bundled" "$RUN/ws-bundled" "$RUN/code-server-bundled.log"
  wait_cs "$((PORT + 2))"
  bundled_args=(--bundled-base "http://127.0.0.1:$((PORT + 2))" --bundled-folder "$RUN/ws-bundled" --bundled-logs "$RUN/ud-bundled/logs" --bundled-ext "$RUN/ext-bundled")
fi

EXT_DIR=$RUN/ext-shared start_cs "$((PORT + 5))" "$RUN/ud-shared" "$RUN/ws-a" "$RUN/code-server-shared.log"
wait_cs "$((PORT + 5))"

log "driving chromium (playwright-core $PLAYWRIGHT_VERSION)"
rc=0
NODE_PATH=$CODE_SERVER_DIR/node_modules "$NODE" test/e2e/e2e.cjs --base "http://127.0.0.1:$PORT" \
  --tests-base "http://127.0.0.1:$((PORT + 1))" --folder "$RUN/ws-ui" --tests-folder "$RUN/ws-tests" \
  --dev "$HERE" --tests "$HERE/test/host/index.cjs" --out "$RUN/out" "${bundled_args[@]}" \
  --fakeagent "$RUN/fakeagent" --bin "$BIN" --proxy "http://127.0.0.1:$PROXY_PORT" \
  --shared-base "http://127.0.0.1:$((PORT + 5))" --folder-a "$RUN/ws-a" --folder-b "$RUN/ws-b" || rc=$?
echo "artifacts: $RUN/out (logs: $RUN/ud/logs, $RUN/code-server.log)"
tail -1 "$RUN/out/summary.txt" 2>/dev/null | sed 's/^/e2e: /' || echo "e2e: 0 passed, 1 failed"
exit $rc
