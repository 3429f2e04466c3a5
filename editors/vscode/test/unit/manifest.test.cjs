// The extension manifest's trust rules (node --test): a workspace cannot choose what the
// extension executes or where it connects.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const fs = require('node:fs');
const { machineSetting } = require('../../out/server.js');

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
const settings = manifest.contributes.configuration.properties;

// Settings that pick a binary, its arguments or an endpoint, by name: a setting added later
// (a proxy listen address, a server URL) falls under the same rule.
const executes = /(path|args|command|executable|binary|address|endpoint|url|listen|host|port)$/i;

test('the settings that pick the daemon or an endpoint are machine-scoped', () => {
  const picked = Object.keys(settings).filter((k) => executes.test(k));
  assert.ok(picked.includes('vtcode.serverPath') && picked.includes('vtcode.serverArgs'), `found ${picked}`);
  for (const k of picked) {
    // "machine": user or remote settings only; VS Code ignores a workspace or folder value
    // (machine-overridable and window would let .vscode/settings.json set it).
    assert.equal(settings[k].scope, 'machine', `${k} has scope ${settings[k].scope}`);
  }
});

test('the extension stays off in Restricted Mode', () => {
  const trust = manifest.capabilities && manifest.capabilities.untrustedWorkspaces;
  assert.ok(trust, 'capabilities.untrustedWorkspaces is declared');
  assert.equal(trust.supported, false);
  assert.ok(typeof trust.description === 'string' && trust.description.length > 0);
});

test('a workspace value of a machine setting is never used', () => {
  const inspected = { defaultValue: 'vtcode-ls', workspaceValue: './evil', workspaceFolderValue: './evil2' };
  assert.equal(machineSetting(inspected), undefined, 'only the default applies');
  assert.equal(machineSetting({ ...inspected, globalValue: '/opt/vtcode-ls' }), '/opt/vtcode-ls');
  assert.deepEqual(machineSetting({ globalValue: ['--log-file', '/tmp/x.log'], workspaceValue: ['--evil'] }), ['--log-file', '/tmp/x.log']);
  assert.equal(machineSetting(undefined), undefined);
});
