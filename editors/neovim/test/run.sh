#!/usr/bin/env bash
# Runs the Neovim plugin headless against the real daemon on Neovim 0.7.2 (Debian 12 packages),
# 0.10.4 (Debian 13 packages) and 0.12.4 (Debian sid packages), each extracted into
# $VTCODE_CACHE/neovim on first use (editors/scripts/install-neovim.sh). The daemon is
# $VTCODE_LS_BIN, else <repo>/bin/vtcode-ls (built with go build when missing or stale).
# NVIM_VERSIONS="0.10.4 0.12.4" runs those only; NVIM=path adds another binary (e.g. a system
# nvim; NVIM_VERSIONS= NVIM=path runs that one only). Versions that cannot be fetched (no apt-get,
# no archive) make the suite say so in one line and not run, or fail with CI=true
# (scripts/suite.sh). Last line: "neovim: N passed, N failed".
set -euo pipefail
PLUGIN=$(cd "$(dirname "$0")/.." && pwd)
. "$PLUGIN/../scripts/env.sh"
SUITE=test-neovim
SUITE_HOW="make test-neovim with apt-get and the Debian archive reachable (the .debs are fetched without root), or NVIM_VERSIONS= NVIM=/path/to/nvim make test-neovim"
BIN=$(vtcode_ls_bin)
read -r -a versions <<<"${NVIM_VERSIONS-$NVIM_ALL_VERSIONS}"
nvims=()
if ((${#versions[@]})); then
  command -v apt-get >/dev/null || suite_unavailable "Neovim ${versions[*]}, fetched with apt-get, which this system lacks"
  mapfile -t nvims < <(bash "$EDITORS_SCRIPTS/install-neovim.sh" "${versions[@]}")
  if ((${#nvims[@]} != ${#versions[@]})); then
    suite_unavailable "Neovim ${versions[*]} from the Debian archive, which install-neovim.sh could not fetch (see above)"
  fi
fi
[ -n "${NVIM:-}" ] && nvims+=("$NVIM")
((${#nvims[@]})) || { echo "not ok - no Neovim selected (NVIM_VERSIONS, NVIM)"; echo "neovim: 0 passed, 1 failed"; exit 1; }

total_pass=0; total_fail=0
for nvim in "${nvims[@]}"; do
  tmp=$(mktemp -d /tmp/vtcode-nvim-test.XXXXXX)
  mkdir -p "$tmp/ws" "$tmp/home"
  version=$(XDG_CACHE_HOME=$tmp/home/.cache XDG_STATE_HOME=$tmp/home/.local/state "$nvim" --version | head -1)
  log "$version"
  start=$(date +%s.%N)
  rc=0
  # -u NONE: no user config; the plugin is put first on 'runtimepath' and its plugin/ file sourced.
  (cd "$tmp/ws" && HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_DATA_HOME=$tmp/home/.local/share \
    XDG_STATE_HOME=$tmp/home/.local/state XDG_CACHE_HOME=$tmp/home/.cache \
    VTCODE_LS_BIN=$BIN VTCODE_TEST_WS=$tmp/ws VTCODE_TEST_OUT=$tmp/out.txt \
    VTCODE_DAEMON_DIR=$tmp/daemon VTCODE_DAEMON_IDLE=30s \
    timeout 180 "$nvim" --headless -u NONE -i NONE -n --cmd "set rtp^=$PLUGIN" --cmd "runtime! plugin/vtcode.lua" \
      -c "luafile $PLUGIN/test/spec.lua" </dev/null >"$tmp/stdout.txt" 2>"$tmp/stderr.txt") || rc=$?
  # The plugin's client attached to a shared daemon of its own ($tmp/daemon): end it.
  VTCODE_DAEMON_DIR=$tmp/daemon "$BIN" stop >/dev/null 2>&1 || true
  cat "$tmp/out.txt" 2>/dev/null || true
  line=$(grep -E '^nvim .*: [0-9]+ passed, [0-9]+ failed$' "$tmp/out.txt" 2>/dev/null | tail -1 || true)
  if [ -z "$line" ]; then
    echo "not ok - $version did not finish (exit $rc)"; sed 's/^/    /' "$tmp/stderr.txt" | tail -30
    total_fail=$((total_fail + 1))
  else
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\1/'); f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\2/')
    total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
    [ "$rc" = 0 ] || [ "$f" != 0 ] || { echo "not ok - $version exited $rc"; total_fail=$((total_fail + 1)); }
  fi
  log "$(printf '%s took %.1fs' "$version" "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')")"
  rm -rf "$tmp"
done
echo "neovim: $total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ]
