#!/usr/bin/env bash
# Platform-specific packages (make vsix / make test-vsix): for each vsce target, cross-compiles the
# daemon (CGO_ENABLED=0) into server/, packages dist/vtcode-ls-<target>-<version>.vsix with
# `vsce package --target`, and checks its content with scripts/check-vsix.cjs (the manifest's
# target platform, the binary's format and architecture, its executable bit, and, for the host's
# platform, that the packaged daemon runs). Installing one of them is the whole set-up; the
# setting vtcode.serverPath still overrides the bundled daemon.
# Usage: package-targets.sh [target...]   (default: linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64)
# Last line: "vsix: N passed, N failed".
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/../scripts/env.sh"
cd "$HERE"
targets=("$@")
((${#targets[@]})) || targets=(linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64)
SUITE=test-vsix
SUITE_HOW="install Node.js 20+ with npm, with the npm registry reachable, then make test-vsix"
rc=0; bash scripts/prepare.sh >/dev/null || rc=$?   # npm ci, bundle, typecheck, the generic .vsix
if [ "$rc" != 0 ]; then
  [ "$rc" = "$SUITE_CANNOT_INSTALL" ] && suite_unavailable "node, npm and the extension's npm dependencies (see above)"
  exit "$rc"
fi
version=$(node -p 'require("./package.json").version')
daemon_version=$(git -C "$REPO_ROOT" describe --tags --always --dirty 2>/dev/null || echo devel)
GO=${GO:-go}
pass=0; fail=0
trap 'rm -rf "$HERE/server"' EXIT
for t in "${targets[@]}"; do
  case $t in
    linux-x64) goos=linux goarch=amd64 exe=vtcode-ls ;;
    linux-arm64) goos=linux goarch=arm64 exe=vtcode-ls ;;
    darwin-x64) goos=darwin goarch=amd64 exe=vtcode-ls ;;
    darwin-arm64) goos=darwin goarch=arm64 exe=vtcode-ls ;;
    win32-x64) goos=windows goarch=amd64 exe=vtcode-ls.exe ;;
    *) echo "not ok - $t: unknown target"; fail=$((fail + 1)); continue ;;
  esac
  rm -rf server; mkdir -p server
  log "build the daemon for $goos/$goarch"
  if ! (cd "$REPO_ROOT" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch "$GO" build -trimpath \
      -ldflags "-s -w -X main.version=$daemon_version -X main.commit=$(git -C "$REPO_ROOT" rev-parse HEAD 2>/dev/null)" -o "$HERE/server/$exe" ./cmd/vtcode-ls) >"$HERE/dist/go-$t.log" 2>&1; then
    echo "not ok - $t: go build for $goos/$goarch failed:"; sed 's/^/    /' "$HERE/dist/go-$t.log" | head -10
    fail=$((fail + 1)); continue
  fi
  chmod 0755 "server/$exe"
  vsix=$HERE/dist/vtcode-ls-$t-$version.vsix
  log "package $(basename "$vsix")"
  if ! node_modules/.bin/vsce package --target "$t" --no-dependencies --allow-missing-repository --skip-license -o "$vsix" >"$HERE/dist/vsce-$t.log" 2>&1; then
    echo "not ok - $t: vsce package failed:"; sed 's/^/    /' "$HERE/dist/vsce-$t.log" | tail -10
    fail=$((fail + 1)); continue
  fi
  if node scripts/check-vsix.cjs "$vsix" "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "vsix: $pass passed, $fail failed"
[ "$fail" = 0 ]
