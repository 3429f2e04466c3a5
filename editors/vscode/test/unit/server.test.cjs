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

test('a lost connection restarts at once with one message per outage, bounded', () => {
  const { Reconnects } = require('../../out/server.js');
  const r = new Reconnects(3, 60000);
  const first = r.closed(0);
  assert.equal(first.restart, true);
  assert.match(first.message, /connection to vtcode-ls was lost.*reconnecting/);
  assert.deepEqual(r.closed(1000), { restart: true, message: '' }, 'the next close of the same outage says nothing');
  assert.deepEqual(r.closed(2000), { restart: true, message: '' });
  const stop = r.closed(3000);
  assert.equal(stop.restart, false, 'the fourth close within the window is not restarted');
  assert.match(stop.message, /stopped 4 times in 1 minutes.*Restart Server/);
  // Later, a new outage: restarted and told again.
  const again = r.closed(10 * 60000);
  assert.equal(again.restart, true);
  assert.notEqual(again.message, '');
  // Closes spread wider than the window never hit the bound.
  const spread = new Reconnects(2, 60000);
  for (let i = 0; i < 10; i++) assert.equal(spread.closed(i * 61000).restart, true, `close ${i}`);
});
