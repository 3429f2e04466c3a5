#!/usr/bin/env bash
# The VS Code extension's test entry point (make test-vscode): prepare.sh (npm ci, esbuild,
# tsc, vsce package), then node --test: unit tests of the pure display logic and protocol tests
# (vscode-jsonrpc) against the real daemon: $VTCODE_LS_BIN, else <repo>/bin/vtcode-ls (built
# with go build when missing or stale). Last line: "vscode: N passed, N failed".
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/../scripts/env.sh"
cd "$HERE"
SUITE=test-vscode
SUITE_HOW="install Node.js 20+ with npm, with the npm registry reachable, then make test-vscode"
rc=0; bash scripts/prepare.sh >/dev/null || rc=$?
if [ "$rc" != 0 ]; then
  [ "$rc" = "$SUITE_CANNOT_INSTALL" ] && suite_unavailable "node, npm and the extension's npm dependencies (see above)"
  exit "$rc"
fi

VTCODE_LS_BIN=$(vtcode_ls_bin)
export VTCODE_LS_BIN
# A daemon a test attaches to is this run's own, stopped at the end (editors/neovim/test/run.sh).
VTCODE_DAEMON_DIR=$(mktemp -d /tmp/vtcode-vscode-daemon.XXXXXX) VTCODE_DAEMON_IDLE=30s
export VTCODE_DAEMON_DIR VTCODE_DAEMON_IDLE
trap 'VTCODE_DAEMON_DIR=$VTCODE_DAEMON_DIR "$VTCODE_LS_BIN" stop >/dev/null 2>&1 || true; rm -rf "$VTCODE_DAEMON_DIR"' EXIT
log "node --test (unit + protocol against $VTCODE_LS_BIN)"
mkdir -p test-results
tap=test-results/node-test.tap
rc=0
node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$tap" test/unit/ test/protocol/ || rc=$?
pass=$(awk '/^# pass /{print $3}' "$tap"); fail=$(awk '/^# fail /{print $3}' "$tap")
echo "vscode: ${pass:-0} passed, ${fail:-0} failed"
[ "$rc" = 0 ] && [ "${fail:-1}" = 0 ]
