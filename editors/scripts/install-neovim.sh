#!/usr/bin/env bash
# Installs the Neovim versions the plugin is tested on into $VTCODE_CACHE/neovim/<version>/, each
# with a `nvim` wrapper script:
#   0.7.2   Debian 12 (bookworm) packages, run with the system loader and LD_LIBRARY_PATH
#   0.10.4  Debian 13 (trixie) packages, run through trixie's own ld.so (needs glibc 2.38)
#   0.12.4  Debian sid (unstable) packages, run through sid's own ld.so (needs glibc 2.42)
# Nothing is installed system-wide: the .debs are downloaded with apt-get using private package
# lists and extracted with dpkg -x. Idempotent: a finished install is marked with .ok and skipped.
# Time-bounded: each apt-get step is killed after NVIM_APT_TIMEOUT seconds (default 300), each
# nvim check after 60; a failed or killed install leaves nothing behind and is redone next time.
# Usage: install-neovim.sh [VERSION...] (default: $NVIM_ALL_VERSIONS). Prints the wrapper paths.
set -euo pipefail
. "$(dirname "$0")/env.sh"
ROOT=$VTCODE_CACHE/neovim
mkdir -p "$ROOT"
APT_TIMEOUT=${NVIM_APT_TIMEOUT:-300}
# keep `nvim --version` from creating folders in ~
export XDG_CACHE_HOME=$ROOT/xdg XDG_STATE_HOME=$ROOT/xdg XDG_DATA_HOME=$ROOT/xdg
URI=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
URI=${URI:-http://deb.debian.org/debian}

# fetch SUITE DEST VERSION [--closure] PKG...: download PKG... from Debian SUITE with private apt
# lists, after checking that SUITE's neovim is VERSION, and extract them into DEST/root. With
# --closure, everything PKG... depends on (recursively, no recommends) is downloaded too.
fetch() {
  local suite=$1 dest=$2 version=$3; shift 3
  local closure=
  if [ "$1" = --closure ]; then closure=1; shift; fi
  local w=$dest/apt
  rm -rf "$dest/root" "$w"; mkdir -p "$w/lists/partial" "$w/cache/archives/partial" "$w/debs" "$dest/root"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $URI $suite main" > "$w/sources.list"
  local o=(-o "Dir::Etc::sourcelist=$w/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$w/lists"
    -o "Dir::Cache=$w/cache" -o Debug::NoLocking=1 -o APT::Sandbox::User=root
    -o Acquire::http::Timeout=30 -o Acquire::Retries=3)
  timeout "$APT_TIMEOUT" apt-get "${o[@]}" update -qq ||
    { echo "apt-get update ($suite) failed or took over ${APT_TIMEOUT}s (NVIM_APT_TIMEOUT)" >&2; return 1; }
  local have
  have=$(apt-cache "${o[@]}" show --no-all-versions neovim 2>/dev/null | awk '/^Version:/{print $2; exit}')
  case $have in
    "$version"-*) ;;
    *) echo "Debian $suite has neovim ${have:-(none)}, not $version" >&2
       [ "$suite" != sid ] || echo "set NVIM_SID_VERSION=${have%%-*} (editors/scripts/env.sh) to test that one" >&2
       return 1 ;;
  esac
  local pkgs=("$@")
  if [ -n "$closure" ]; then
    mapfile -t pkgs < <(apt-cache "${o[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
      --no-breaks --no-replaces --no-enhances "$@" | grep -v -e '^ ' -e '^<' | sort -u)
    ((${#pkgs[@]} > 1)) || { echo "apt-cache depends $* ($suite) found nothing" >&2; return 1; }
  fi
  (cd "$w/debs" && timeout "$APT_TIMEOUT" apt-get "${o[@]}" download "${pkgs[@]}" >/dev/null) ||
    { echo "apt-get download ($suite) failed or took over ${APT_TIMEOUT}s (NVIM_APT_TIMEOUT)" >&2; return 1; }
  local d; for d in "$w/debs"/*.deb; do dpkg -x "$d" "$dest/root"; done
  rm -rf "$w/lists" "$w/cache"
}

# verify DEST VERSION: the wrapper prints VERSION and starts headless with its runtime.
verify() {
  local dest=$1 version=$2 out
  out=$(timeout 60 "$dest/nvim" --version 2>&1 | head -1) || true
  if [[ $out != "NVIM v$version" ]]; then
    echo "neovim $version does not run: $out" >&2; timeout 60 "$dest/nvim" --version >&2 || true; return 1
  fi
  out=$(cd "$ROOT" && timeout 60 "$dest/nvim" --headless -u NONE -i NONE -n \
    -c 'lua io.write(vim.fn.filereadable(vim.env.VIMRUNTIME .. "/lua/vim/lsp.lua"))' -c 'qa!' 2>&1) || true
  if [ "$out" != 1 ]; then echo "neovim $version does not find its runtime: $out" >&2; return 1; fi
}

install_old() { # 0.7.2 from bookworm, run with the system loader and LD_LIBRARY_PATH
  local dest=$ROOT/$NVIM_OLD_VERSION
  [ -f "$dest/.ok" ] && return 0
  installing=$dest
  log "installing neovim $NVIM_OLD_VERSION into $dest"
  fetch bookworm "$dest" "$NVIM_OLD_VERSION" neovim neovim-runtime libluajit-5.1-2 libluajit-5.1-common \
    libmsgpackc2 libtermkey1 libtree-sitter0 libunibilium4 libuv1 libvterm0 lua-luv
  cat > "$dest/nvim" <<W
#!/bin/sh
export VIM=$dest/root/usr/share/nvim
export LD_LIBRARY_PATH=$dest/root/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
exec $dest/root/usr/bin/nvim "\$@"
W
  chmod +x "$dest/nvim"
  verify "$dest" "$NVIM_OLD_VERSION"
  touch "$dest/.ok"
}

# install_own_loader VERSION SUITE [--closure] PKG...: a Neovim whose glibc is newer than the
# system's, run through the suite's own dynamic loader with --library-path, so that every library,
# glibc included, comes from the extracted packages.
install_own_loader() {
  local version=$1 suite=$2; shift 2
  local dest=$ROOT/$version
  [ -f "$dest/.ok" ] && return 0
  installing=$dest
  log "installing neovim $version ($suite) into $dest"
  fetch "$suite" "$dest" "$version" "$@"
  local lib=$dest/root/usr/lib/x86_64-linux-gnu
  cat > "$dest/nvim" <<W
#!/bin/sh
export VIM=$dest/root/usr/share/nvim
exec $lib/ld-linux-x86-64.so.2 --library-path $lib $dest/root/usr/bin/nvim "\$@"
W
  chmod +x "$dest/nvim"
  # every shared library must resolve inside $dest: a host library would mix two glibc versions
  local bad
  bad=$("$lib/ld-linux-x86-64.so.2" --library-path "$lib" --list "$dest/root/usr/bin/nvim" 2>&1 \
    | grep -v -e 'linux-vdso' -e "=> $dest/root/" || true)
  if [ -n "$bad" ]; then echo "neovim $version: libraries missing from $suite's packages:" >&2; echo "$bad" >&2; return 1; fi
  verify "$dest" "$version"
  touch "$dest/.ok"
}

install() {
  case $1 in
    "$NVIM_OLD_VERSION") install_old ;;
    "$NVIM_NEW_VERSION") # 0.10.4 from trixie
      install_own_loader "$1" trixie neovim neovim-runtime libluajit-5.1-2 libluajit-5.1-common libmsgpack-c2 \
        libtree-sitter0.22 libunibilium4 libuv1t64 libvterm0 lua-lpeg lua-luv libc6 libgcc-s1 ;;
    "$NVIM_SID_VERSION") # the newest from sid (0.12.4: glibc 2.42+, libtree-sitter0.26, libutf8proc3):
      # sid's library versions move, so take neovim's dependency closure (libc6, libgcc-s1, … included)
      install_own_loader "$1" sid --closure neovim ;;
    *) echo "install-neovim.sh: unknown version $1 (known: $NVIM_ALL_VERSIONS)" >&2; return 1 ;;
  esac
}

# a failed or interrupted install leaves nothing behind (no package lists, no half-extracted tree)
installing=
trap '[ -z "$installing" ] || [ -f "$installing/.ok" ] || rm -rf "$installing"' EXIT
trap 'exit 130' INT TERM

versions=("$@")
((${#versions[@]})) || read -r -a versions <<<"$NVIM_ALL_VERSIONS"
# one install at a time: a second run waits for the first, then finds its .ok
exec 9>"$ROOT/.lock"
flock -w $((3 * APT_TIMEOUT)) 9 || { echo "install-neovim.sh: timed out waiting for $ROOT/.lock" >&2; exit 1; }
for v in "${versions[@]}"; do install "$v"; done
for v in "${versions[@]}"; do echo "$ROOT/$v/nvim"; done
