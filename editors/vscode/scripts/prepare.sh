#!/usr/bin/env bash
# Installs the extension's npm dependencies (npm ci, npm cache in $VTCODE_CACHE/npm, skipped when
# package-lock.json is unchanged), bundles with esbuild, typechecks with tsc (the extension, and the
# webview's script against the DOM) and packages dist/vtcode-ls-<version>.vsix with vsce. Prints
# the .vsix path on stdout. Exits $SUITE_CANNOT_INSTALL (scripts/suite.sh) when node/npm are
# missing or npm ci cannot install.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/../scripts/env.sh"
cd "$HERE"
export npm_config_cache=$VTCODE_CACHE/npm npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

need_npm || exit
lockhash=$(cat package-lock.json package.json | sha256sum | cut -c1-16)
if [ "$(cat node_modules/.vtcode-lock 2>/dev/null)" != "$lockhash" ]; then
  log "npm ci"
  npm ci --prefer-offline --loglevel=error >&2 || { log "npm ci failed (is the npm registry reachable?)"; exit "$SUITE_CANNOT_INSTALL"; }
  echo "$lockhash" > node_modules/.vtcode-lock
fi

log "build (esbuild $(node_modules/.bin/esbuild --version))"
node scripts/build.mjs --production
log "typecheck (tsc $(node_modules/.bin/tsc --version | awk '{print $2}'))"
node_modules/.bin/tsc -p . --noEmit
node_modules/.bin/tsc -p src/page --noEmit # the webview's script: DOM, no Node

version=$(node -p 'require("./package.json").version')
VSIX=$HERE/dist/vtcode-ls-$version.vsix
log "package $(basename "$VSIX") (vsce $(node_modules/.bin/vsce --version))"
node_modules/.bin/vsce package --no-dependencies --allow-missing-repository --skip-license -o "$VSIX" >&2
node - "$VSIX" <<'JS'
// Checks the .vsix content: the bundle and manifest are in, sources and node_modules are not.
const yauzl = require('yauzl');
yauzl.open(process.argv[2], { lazyEntries: false }, (err, zip) => {
  if (err) { console.error(err.message); process.exit(1); }
  const names = [];
  zip.on('entry', (e) => names.push(e.fileName));
  zip.on('end', () => {
    const need = ['extension/package.json', 'extension/dist/extension.js', 'extension/readme.md', 'extension.vsixmanifest'];
    const missing = need.filter((n) => !names.includes(n));
    const bad = names.filter((n) => /^extension\/(src|node_modules|test|out)\//.test(n));
    if (missing.length || bad.length) { console.error(`vsix content wrong: missing ${missing}, unwanted ${bad.slice(0, 5)}`); process.exit(1); }
    console.error(`vsix ok: ${names.length} files: ${names.sort().join(', ')}`);
  });
});
JS
echo "$VSIX"
