#!/usr/bin/env bash
# Installs Neovim 0.7.2 (Debian 12 packages) and 0.10.4 (Debian 13 packages) into
# $VTCODE_CACHE/neovim/<version>/, each with a `nvim` wrapper script. Nothing is installed
# system-wide: the .debs are downloaded with apt-get and extracted with dpkg -x. Idempotent:
# a finished install is marked with .ok and skipped. Prints the two wrapper paths.
set -euo pipefail
. "$(dirname "$0")/env.sh"
ROOT=$VTCODE_CACHE/neovim
mkdir -p "$ROOT"
# keep `nvim --version` from creating folders in ~
export XDG_CACHE_HOME=$ROOT/xdg XDG_STATE_HOME=$ROOT/xdg XDG_DATA_HOME=$ROOT/xdg
URI=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
URI=${URI:-http://deb.debian.org/debian}

# fetch SUITE DEST PKG...: download PKG... from Debian SUITE with private apt lists, extract into DEST/root.
fetch() {
  local suite=$1 dest=$2; shift 2
  local w=$dest/apt
  rm -rf "$dest/root" "$w"; mkdir -p "$w/lists/partial" "$w/cache/archives/partial" "$w/debs" "$dest/root"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $URI $suite main" > "$w/sources.list"
  local o=(-o "Dir::Etc::sourcelist=$w/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$w/lists" -o "Dir::Cache=$w/cache" -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
  apt-get "${o[@]}" update -qq
  (cd "$w/debs" && apt-get "${o[@]}" download "$@" >/dev/null)
  local d; for d in "$w/debs"/*.deb; do dpkg -x "$d" "$dest/root"; done
  rm -rf "$w/lists" "$w/cache"
}

install_old() { # 0.7.2 from bookworm, run with the system loader and LD_LIBRARY_PATH
  local dest=$ROOT/$NVIM_OLD_VERSION
  [ -f "$dest/.ok" ] && return 0
  log "installing neovim $NVIM_OLD_VERSION into $dest"
  fetch bookworm "$dest" neovim neovim-runtime libluajit-5.1-2 libluajit-5.1-common libmsgpackc2 \
    libtermkey1 libtree-sitter0 libunibilium4 libuv1 libvterm0 lua-luv
  cat > "$dest/nvim" <<W
#!/bin/sh
export VIM=$dest/root/usr/share/nvim
export LD_LIBRARY_PATH=$dest/root/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
exec $dest/root/usr/bin/nvim "\$@"
W
  chmod +x "$dest/nvim"
  "$dest/nvim" --version | head -1 | grep -q "v$NVIM_OLD_VERSION" || { echo "neovim $NVIM_OLD_VERSION does not run" >&2; "$dest/nvim" --version; exit 1; }
  touch "$dest/.ok"
}

install_new() { # 0.10.4 from trixie, run through trixie's own dynamic loader (needs glibc 2.38)
  local dest=$ROOT/$NVIM_NEW_VERSION
  [ -f "$dest/.ok" ] && return 0
  log "installing neovim $NVIM_NEW_VERSION into $dest"
  fetch trixie "$dest" neovim neovim-runtime libluajit-5.1-2 libluajit-5.1-common libmsgpack-c2 \
    libtree-sitter0.22 libunibilium4 libuv1t64 libvterm0 lua-lpeg lua-luv libc6 libgcc-s1
  cat > "$dest/nvim" <<W
#!/bin/sh
export VIM=$dest/root/usr/share/nvim
exec $dest/root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --library-path $dest/root/usr/lib/x86_64-linux-gnu $dest/root/usr/bin/nvim "\$@"
W
  chmod +x "$dest/nvim"
  "$dest/nvim" --version | head -1 | grep -q "v$NVIM_NEW_VERSION" || { echo "neovim $NVIM_NEW_VERSION does not run" >&2; "$dest/nvim" --version; exit 1; }
  touch "$dest/.ok"
}

install_old
install_new
echo "$ROOT/$NVIM_OLD_VERSION/nvim"
echo "$ROOT/$NVIM_NEW_VERSION/nvim"
