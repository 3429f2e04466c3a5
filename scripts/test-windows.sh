#!/usr/bin/env bash
# make test-windows: the unit tests of the packages under the store (store, config, history)
# built for windows/amd64 and run under Wine, headless. Wine (Debian 12's wine64 8.0) and the
# MinGW compiler are installed on first use when missing, as root with apt-get; without them
# the script says in one line why it cannot run and exits 0 (make cross, the Windows build and
# vet, stays the check), or, with CI=true, fails (scripts/suite.sh). Two shims make Go programs run under Wine 8.0, and are said on every run:
#   - bcryptprimitives.dll (scripts/wine/bcryptprimitives.c): the Go runtime needs ProcessPrng;
#   - a build overlay of the Go toolchain's internal/syscall/windows/at_windows.go: Wine 8.0
#     answers STATUS_NOT_IMPLEMENTED to FileDispositionInformationEx (POSIX-semantics delete),
#     which Go only falls back from on the statuses older Windows versions give; the overlay
#     adds Wine's, so a delete takes Go's own fallback (the one pre-1607 Windows and FAT32 use).
# One test is left out under Wine: TestSymlinkedSessionRefused, because Wine 8.0's
# CreateSymbolicLinkW reports success and creates nothing (the attack cannot be staged).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
GO=${GO:-go}
CACHE=${VTCODE_CACHE:-$ROOT/.cache}
PKGS=${WINDOWS_PKGS:-"./store/ ./config/ ./history/ ./session/"}
SKIP='^TestSymlinkedSessionRefused$'
say() { echo "test-windows: $*" >&2; }
. scripts/suite.sh
SUITE=test-windows
SUITE_HOW="make test-windows as root on Debian 12 with its archive reachable, or after apt-get install wine64 gcc-mingw-w64-x86-64-win32 (make cross stays the Windows check)"

wine_bin() {
  command -v wine64 2>/dev/null || { [ -x /usr/lib/wine/wine64 ] && echo /usr/lib/wine/wine64; } || true
}
WINE=$(wine_bin)
CC=$(command -v x86_64-w64-mingw32-gcc 2>/dev/null || true)
if [ -z "$WINE" ] || [ -z "$CC" ]; then
  missing=()
  [ -z "$WINE" ] && missing+=(wine64)
  [ -z "$CC" ] && missing+=(gcc-mingw-w64-x86-64-win32)
  suite_can_install || suite_unavailable "${missing[*]}, not installed, and installing them takes apt-get as root"
  sudo=; [ "$(id -u)" = 0 ] || sudo="sudo -n"
  say "installing ${missing[*]} (apt-get, first use)"
  # A fresh machine may have no package lists yet: update once, then retry.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
    { $sudo apt-get update >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}" >&2; } ||
    suite_unavailable "${missing[*]}, which apt-get could not install (see above)"
  WINE=$(wine_bin)
  CC=$(command -v x86_64-w64-mingw32-gcc || true)
  [ -n "$WINE" ] && [ -n "$CC" ] || suite_unavailable "wine64 and gcc-mingw-w64-x86-64-win32, still missing after apt-get install"
fi

W=$CACHE/wine
mkdir -p "$W"
export WINEPREFIX=$W/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" DISPLAY=

# The ProcessPrng shim, built once, copied into the prefix's system32.
dll=$W/bcryptprimitives.dll
if [ ! -f "$dll" ] || [ scripts/wine/bcryptprimitives.c -nt "$dll" ]; then
  "$CC" -O2 -shared -o "$dll" scripts/wine/bcryptprimitives.c scripts/wine/bcryptprimitives.def -ladvapi32
fi
if [ ! -d "$WINEPREFIX/drive_c/windows/system32" ]; then
  say "creating the Wine prefix $WINEPREFIX"
  "$WINE" wineboot --init >/dev/null 2>&1 || true
  wineserver -w 2>/dev/null || true
fi
[ -d "$WINEPREFIX/drive_c/windows/system32" ] || { say "Wine could not create its prefix $WINEPREFIX"; exit 1; }
cp "$dll" "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"

# The delete-fallback overlay, for this Go toolchain.
src=$("$GO" env GOROOT)/src/internal/syscall/windows/at_windows.go
ov=$W/overlay-$("$GO" env GOVERSION)
mkdir -p "$ov"
awk '
  /STATUS_NOT_SUPPORTED: *\/\/ the file system/ && !done {
    sub(/STATUS_NOT_SUPPORTED:/, "STATUS_NOT_SUPPORTED,")
    print
    print "\t\tNTStatus(0xC0000002): // STATUS_NOT_IMPLEMENTED: Wine 8.0 has no FileDispositionInformationEx"
    done = 1
    next
  }
  { print }
  END { if (!done) exit 3 }
' "$src" > "$ov/at_windows.go" || {
  say "the Wine delete shim no longer applies to $("$GO" env GOVERSION) ($src changed): update scripts/test-windows.sh"
  exit 1
}
printf '{"Replace":{"%s":"%s"}}\n' "$src" "$ov/at_windows.go" > "$ov/overlay.json"

say "$("$WINE" --version) on $PKGS; shims: bcryptprimitives.dll (ProcessPrng), Go delete fallback on STATUS_NOT_IMPLEMENTED; left out: $SKIP (Wine makes no symlinks)"
# shellcheck disable=SC2086
GOOS=windows GOARCH=amd64 "$GO" test -overlay "$ov/overlay.json" -exec "$WINE" -count=1 -skip "$SKIP" $PKGS
