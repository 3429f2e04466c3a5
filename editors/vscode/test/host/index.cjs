// The extension's own tests, run inside a real VS Code extension host (code-server with the
// smoke-test driver; see scripts/e2e.sh): `run()` is the extensionTestsPath entry point of the
// @vscode/test-electron layout. The daemon is the one `vtcode.serverPath` names.
const assert = require('node:assert/strict');
const cp = require('node:child_process');
const vscode = require('vscode');
const { agentSession } = require('../fixtures.cjs');

const EXT_ID = 'vtcode.vtcode-ls';
const COMMANDS = ['vtcode.compact', 'vtcode.compactWithInstructions', 'vtcode.showStats', 'vtcode.editPrompt',
  'vtcode.restore', 'vtcode.selectSession', 'vtcode.restartServer', 'vtcode.showContext', 'vtcode.previewCompaction',
  'vtcode.applyPreview', 'vtcode.discardPreview'];

function until(event, pred, what, ms = 15000) {
  return new Promise((resolve, reject) => {
    if (pred()) return resolve();
    const timer = setTimeout(() => { sub.dispose(); reject(new Error('timed out waiting for ' + what)); }, ms);
    const sub = event(() => { if (pred()) { clearTimeout(timer); sub.dispose(); resolve(); } });
  });
}

async function run() {
  const results = [];
  const state = {};
  const t = async (name, fn) => {
    try { await fn(); results.push([name, true]); console.log(`ok - ${name}`); }
    catch (e) { results.push([name, false]); console.log(`not ok - ${name}: ${e && e.stack || e}`); }
  };

  await t('the extension activates and returns { client, activeSession() }', async () => {
    const ext = vscode.extensions.getExtension(EXT_ID);
    assert.ok(ext, EXT_ID + ' is installed');
    state.api = ext.isActive ? ext.exports : await ext.activate();
    assert.equal(typeof state.api.activeSession, 'function');
    assert.ok(state.api.client, 'client');
    state.client = await state.api.ready();
    assert.ok(state.client.isRunning(), 'client running');
    assert.equal(state.client.initializeResult.serverInfo.name, 'vtcode-ls');
    assert.equal(state.client.initializeResult.capabilities.experimental.vtcode.protocolVersion, 1);
  });

  await t('every command is registered', async () => {
    const all = await vscode.commands.getCommands(true);
    for (const c of COMMANDS) assert.ok(all.includes(c), c);
  });

  await t('settings are contributed with their defaults', () => {
    const pkg = vscode.extensions.getExtension(EXT_ID).packageJSON;
    const props = pkg.contributes.configuration.properties;
    assert.equal(props['vtcode.serverPath'].default, 'vtcode-ls');
    assert.deepEqual(props['vtcode.trace.server'].enum, ['off', 'messages', 'verbose']);
  });

  await t('an agent session sent through the API becomes the active session', async () => {
    const o = await state.client.sendRequest('vtcode/openSession', { contextWindow: 32000 });
    state.sid = o.sessionId;
    await state.client.sendRequest('vtcode/appendMessages', { sessionId: state.sid, messages: agentSession(18, 'host') });
    await until(state.api.onDidChangeActiveSession, () => state.api.activeSession() === state.sid, 'active session');
  });

  await t('VT Code: Show Projection Stats returns the stats', async () => {
    const s = await vscode.commands.executeCommand('vtcode.showStats');
    assert.equal(s.sessionId, state.sid);
    assert.equal(s.messages, 40);
    assert.equal(s.capacity, 32000);
  });

  await t('VT Code: Compact Context compacts the active session', async () => {
    const r = await vscode.commands.executeCommand('vtcode.compact');
    assert.ok(r, 'a result');
    assert.equal(r.originalMessageCount, 40);
    assert.ok(r.compactedMessageCount < 40);
    assert.match(r.message, /^Context compacted · /);
    state.artifactId = r.artifactId;
  });

  await t('VT Code: Compact Context with Instructions… passes the instructions', async () => {
    await state.client.sendRequest('vtcode/appendMessages', { sessionId: state.sid, messages: agentSession(12, 'host2').slice(1) });
    const r = await vscode.commands.executeCommand('vtcode.compactWithInstructions', 'Keep the exact go test commands.');
    assert.ok(r && r.trigger === 'manual', 'a manual compaction');
  });

  await t('VT Code: Restore History… restores an artifact', async () => {
    const r = await vscode.commands.executeCommand('vtcode.restore', state.artifactId);
    assert.equal(r.messages, 40);
    const s = await vscode.commands.executeCommand('vtcode.showStats');
    assert.equal(s.messages, 40);
  });

  await t('VT Code: Show Context opens the context map of the active session', async () => {
    const m = await vscode.commands.executeCommand('vtcode.showContext');
    assert.ok(m, 'a map');
    assert.equal(m.sessionId, state.sid);
    assert.equal(m.messages, 40);
    assert.equal(m.categories.reduce((a, c) => a + c.tokens, 0), 32000);
    assert.ok(m.artifacts.some((a) => a.artifactId === state.artifactId), 'the artifact is listed');
    const find = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs)
      .find((x) => x.input instanceof vscode.TabInputWebview && /vtcode\.context/.test(x.input.viewType) && /%$/.test(x.label));
    await until(vscode.window.tabGroups.onDidChangeTabs, () => find() !== undefined, 'the context webview tab');
    const tab = find();
    assert.match(tab.label, /^VT Code Context · \d+%$/);
    await vscode.window.tabGroups.close(tab);
  });

  await t('VT Code: Preview Compaction shows the summary; Apply commits it as edited', async () => {
    const p = await vscode.commands.executeCommand('vtcode.previewCompaction');
    assert.ok(p && p.previewId, 'a preview');
    const before = await state.client.sendRequest('vtcode/history', { sessionId: state.sid, limit: 1 });
    assert.equal(before.total, 40, 'the preview changed nothing');
    const ed = vscode.window.activeTextEditor;
    assert.equal(ed.document.uri.scheme, 'vtcode-preview');
    assert.equal(ed.document.getText(), p.summary);
    const edit = new vscode.WorkspaceEdit();
    edit.replace(ed.document.uri, new vscode.Range(0, 0, ed.document.lineCount, 0), 'Goal: fix TestHandler (edited in the editor).');
    assert.ok(await vscode.workspace.applyEdit(edit));
    const r = await vscode.commands.executeCommand('vtcode.applyPreview');
    assert.ok(r && r.trigger === 'manual', 'committed');
    assert.match(r.message, /edited summary/);
    const h = await state.client.sendRequest('vtcode/history', { sessionId: state.sid, limit: 1 });
    assert.equal(h.messages[0].content, 'Previous conversation summary:\nGoal: fix TestHandler (edited in the editor).');
    assert.equal(h.total, p.compactedMessageCount);
    assert.ok(!vscode.workspace.textDocuments.some((d) => d.uri.scheme === 'vtcode-preview' && !d.isClosed && vscode.window.visibleTextEditors.some((e) => e.document === d)), 'the preview editor is closed');
  });

  await t('a preview the history moved past is refused; Discard drops a preview', async () => {
    await state.client.sendRequest('vtcode/appendMessages', { sessionId: state.sid, messages: agentSession(12, 'host3').slice(1) });
    const p = await vscode.commands.executeCommand('vtcode.previewCompaction');
    assert.ok(p && p.previewId);
    await state.client.sendRequest('vtcode/appendMessages', { sessionId: state.sid, messages: [{ role: 'user', content: 'one more' }] });
    const total = (await state.client.sendRequest('vtcode/history', { sessionId: state.sid, limit: 1 })).total;
    assert.equal(await vscode.commands.executeCommand('vtcode.applyPreview'), undefined, 'nothing applied');
    assert.equal((await state.client.sendRequest('vtcode/history', { sessionId: state.sid, limit: 1 })).total, total, 'history unchanged');
    const arts = (await state.client.sendRequest('vtcode/listArtifacts', { sessionId: state.sid })).length;
    assert.ok((await vscode.commands.executeCommand('vtcode.previewCompaction')).previewId);
    assert.equal(await vscode.commands.executeCommand('vtcode.discardPreview'), true);
    assert.equal((await state.client.sendRequest('vtcode/listArtifacts', { sessionId: state.sid })).length, arts, 'no artifact');
    assert.equal((await state.client.sendRequest('vtcode/history', { sessionId: state.sid, limit: 1 })).total, total);
  });

  await t('VT Code: Compact Context on a compact history reports it (a result, not an error)', async () => {
    const o = await state.client.sendRequest('vtcode/openSession', { contextWindow: 32000 });
    await state.client.sendRequest('vtcode/appendMessages', { sessionId: o.sessionId, messages: [{ role: 'user', content: 'Fix TestHandler.' }] });
    assert.equal(await vscode.commands.executeCommand('vtcode.selectSession', o.sessionId), o.sessionId);
    const r = await vscode.commands.executeCommand('vtcode.compact');
    assert.ok(r, 'a result');
    assert.equal(r.mode, 'none');
    assert.equal(r.message, 'Conversation is already compact.');
  });

  await t('VT Code: Select Session… pins a session and unpins', async () => {
    const o = await state.client.sendRequest('vtcode/openSession', { contextWindow: 64000 });
    assert.equal(await vscode.commands.executeCommand('vtcode.selectSession', state.sid), state.sid);
    await state.client.sendRequest('vtcode/appendMessages', { sessionId: o.sessionId, messages: agentSession(2, 'other') });
    await state.client.sendRequest('vtcode/projectionStats', { sessionId: o.sessionId });
    assert.equal(state.api.activeSession(), state.sid, 'a picked session stays active');
    await vscode.commands.executeCommand('vtcode.selectSession', null);
    await state.client.sendRequest('vtcode/appendMessages', { sessionId: o.sessionId, messages: [{ role: 'user', content: 'next' }] });
    await until(state.api.onDidChangeActiveSession, () => state.api.activeSession() === o.sessionId, 'follow the updated session');
  });

  await t('VT Code: Edit Compaction Prompt reads and saves through vtcode/compactPrompt', async () => {
    const uri = vscode.Uri.parse('vtcode-prompt:/compaction-prompt.md');
    const def = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
    assert.ok(def.length > 20, 'the default prompt');
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode('Summarize tersely.\n'));
    let r = await state.client.sendRequest('vtcode/compactPrompt', { action: 'get' });
    assert.equal(r.isDefault, false);
    assert.equal(r.prompt.trim(), 'Summarize tersely.');
    await vscode.workspace.fs.writeFile(uri, new Uint8Array());
    r = await state.client.sendRequest('vtcode/compactPrompt', { action: 'get' });
    assert.equal(r.isDefault, true);
  });

  // Last: it restarts the connection. The window attaches to the shared daemon (the default).
  await t('the shared daemon killed: the window reconnects, reopens its sessions, follows the same one, and the agent goes on', async () => {
    const bin = vscode.workspace.getConfiguration('vtcode').get('serverPath');
    const status = () => JSON.parse(cp.execFileSync(bin, ['status', '--json'], { encoding: 'utf8' }));
    const active = state.api.activeSession();
    assert.ok(active, 'a session is followed');
    const before = (await state.client.sendRequest('vtcode/history', { sessionId: active, limit: 1 })).total;
    const old = status();
    const Stopped = 1, Running = 2; // vscode-languageclient's State
    let stopped = false;
    const restarted = new Promise((resolve, reject) => {
      const timer = setTimeout(() => { sub.dispose(); reject(new Error('timed out waiting for the reconnect')); }, 30000);
      const sub = state.client.onDidChangeState((e) => {
        if (e.newState === Stopped) stopped = true;
        if (stopped && e.newState === Running) { clearTimeout(timer); sub.dispose(); resolve(); }
      });
    });
    process.kill(old.pid, 'SIGKILL');
    await restarted;
    // the agent's next request, at once: its session was reopened before it went out
    const r = await state.api.prepareRequest({ sessionId: active, messages: [{ role: 'user', content: 'go on after the daemon restarted' }] });
    assert.ok(r.messages.length > 0, 'a projection');
    assert.equal((await state.client.sendRequest('vtcode/history', { sessionId: active, limit: 1 })).total, before + 1, 'the session went on where it was');
    assert.notEqual(status().pid, old.pid, 'a new daemon');
    await until(state.api.onDidChangeActiveSession, () => state.api.activeSession() === active, 'the same session followed again');
  });

  const passed = results.filter((r) => r[1]).length;
  const failed = results.length - passed;
  console.log(`host tests: ${passed} passed, ${failed} failed`);
  if (failed) throw new Error(`${failed} extension-host tests failed`);
}

module.exports = { run };
