// Which daemon the extension runs (node --test). Built from src/server.ts into out/.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { resolveServer, bundledServer, VsixTargets } = require('../../out/server.js');

const ext = '/home/me/.vscode/extensions/vtcode.vtcode-ls-0.1.0-linux-x64';
const only = (...files) => (p) => files.includes(p);

test('the daemon bundled in a platform-specific package is used when the setting is not set', () => {
  const bundled = path.join(ext, 'server', 'vtcode-ls');
  assert.deepEqual(resolveServer({ configured: undefined, extensionPath: ext, platform: 'linux', exists: only(bundled) }), { command: bundled, source: 'bundled' });
  assert.equal(bundledServer(ext, 'win32'), path.join(ext, 'server', 'vtcode-ls.exe'));
});

test('vtcode.serverPath overrides the bundled daemon', () => {
  const exists = only(path.join(ext, 'server', 'vtcode-ls'));
  assert.deepEqual(resolveServer({ configured: '/opt/vtcode-ls', extensionPath: ext, platform: 'linux', exists }), { command: '/opt/vtcode-ls', source: 'setting' });
  assert.deepEqual(resolveServer({ configured: 'vtcode-ls', extensionPath: ext, platform: 'linux', exists }), { command: 'vtcode-ls', source: 'setting' }, 'even the default name, set explicitly');
  assert.equal(resolveServer({ configured: '~/bin/vtcode-ls', extensionPath: ext, home: '/home/me', exists }).command, '/home/me/bin/vtcode-ls');
  assert.equal(resolveServer({ configured: 'bin/vtcode-ls', extensionPath: ext, folder: '/ws', exists }).command, '/ws/bin/vtcode-ls');
});

test('without a bundled daemon or a setting, vtcode-ls is looked up on PATH', () => {
  assert.deepEqual(resolveServer({ configured: '  ', extensionPath: ext, platform: 'linux', exists: () => false }), { command: 'vtcode-ls', source: 'path' });
});

test('the five vsce targets map to Go platforms', () => {
  assert.deepEqual(Object.keys(VsixTargets), ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64']);
  assert.deepEqual(VsixTargets['win32-x64'], { goos: 'windows', goarch: 'amd64' });
});
