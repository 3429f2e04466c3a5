// Protocol tests: the extension's protocol layer (vscode-jsonrpc, the library under
// vscode-languageclient) against the real vtcode-ls daemon (VTCODE_LS_BIN), per SPEC §1, §9, §10.
const test = require('node:test');
const assert = require('node:assert/strict');
const rpc = require('vscode-jsonrpc/node');
const { startDaemon, progressOf } = require('./daemon.cjs');
const { agentSession } = require('../fixtures.cjs');

const METHODS = ['vtcode/openSession', 'vtcode/closeSession', 'vtcode/listSessions', 'vtcode/appendMessages', 'vtcode/history',
  'vtcode/prepareRequest', 'vtcode/recordResponse', 'vtcode/compact', 'vtcode/projectionStats', 'vtcode/setPolicy',
  'vtcode/getPolicy', 'vtcode/listArtifacts', 'vtcode/restore', 'vtcode/switchModel', 'vtcode/compactPrompt'];
const STATS_FIELDS = ['sessionId', 'messages', 'projectedMessages', 'originalTokens', 'projectedTokens', 'prefixTokens',
  'clearedResults', 'protectedResults', 'protectedBatches', 'clearedInputs', 'localTrigger', 'historyBudget', 'capacity',
  'reservedOutput', 'compactionThreshold', 'pressure', 'state', 'strategy', 'compactions'];
const STATES = ['ok', 'warn', 'compacting', 'critical'];

const isPressure = (sessionId, pred = () => true) => (e) =>
  e.method === 'vtcode/tokenPressure' && e.params.sessionId === sessionId && pred(e.params);

test('vtcode-ls protocol through vscode-jsonrpc', async (t) => {
  const d = await startDaemon();
  t.after(() => d.close());
  const { conn } = d;
  let sid;
  let statsBefore;
  let compactResult;
  let compactMark = 0;

  await t.test('initialize: server info and the vtcode capability', () => {
    assert.equal(d.init.serverInfo.name, 'vtcode-ls');
    assert.equal(typeof d.init.serverInfo.version, 'string');
    const caps = d.init.capabilities.experimental.vtcode;
    assert.equal(caps.protocolVersion, 1);
    for (const m of METHODS) assert.ok(caps.methods.includes(m), `methods lists ${m}`);
  });

  await t.test('openSession creates a session; listSessions shows it', async () => {
    const r = await conn.sendRequest('vtcode/openSession', { contextWindow: 32000 });
    assert.equal(typeof r.sessionId, 'string');
    assert.match(r.sessionId, /^[A-Za-z0-9._-]{1,64}$/);
    assert.equal(r.resumed, false);
    assert.equal(r.messages, 0);
    assert.ok(r.policy && typeof r.policy === 'object' && r.policy.toolResultClearing, 'policy carries toolResultClearing');
    sid = r.sessionId;
    const list = await conn.sendRequest('vtcode/listSessions', {});
    assert.ok(list.some((s) => s.sessionId === sid), 'listSessions includes the new session');
    assert.deepEqual(list.filter((s) => s.active).map((s) => s.sessionId), [sid], 'the new session is the one marked active');
  });

  await t.test('appendMessages stores the turns and sends tokenPressure', async () => {
    const msgs = agentSession(18, 'a');
    assert.equal(msgs.length, 40);
    const r = await conn.sendRequest('vtcode/appendMessages', { sessionId: sid, messages: msgs });
    assert.equal(r.messages, 40);
    assert.ok(r.historyTokens > 20000, `historyTokens ${r.historyTokens} > 20000`);
    const ev = await d.waitFor(isPressure(sid, (p) => p.originalTokens > 20000), 'tokenPressure after append');
    const p = ev.params;
    assert.equal(p.capacity, 32000);
    assert.ok(p.projectedTokens > 0 && p.projectedTokens <= p.originalTokens);
    assert.ok(STATES.includes(p.state), `state ${p.state}`);
    assert.equal(typeof p.workspace, 'string');
    assert.ok(p.pressure > 0);
  });

  await t.test('prepareRequest returns the projection with old tool results cleared', async () => {
    const r = await conn.sendRequest('vtcode/prepareRequest', { sessionId: sid, systemPrompt: 'You are a coding agent.' });
    assert.ok(Array.isArray(r.messages) && r.messages.length > 0);
    assert.equal(typeof r.trimmed, 'boolean');
    for (const f of STATS_FIELDS) assert.ok(f in r.stats, `stats.${f}`);
    assert.equal(r.stats.sessionId, sid);
    assert.equal(r.stats.capacity, 32000);
    assert.ok(r.stats.clearedResults > 0, `clearedResults ${r.stats.clearedResults} > 0`);
    assert.ok(r.stats.projectedTokens < r.stats.originalTokens);
    const stubs = r.messages.filter((m) => m.role === 'tool' && typeof m.content === 'string' && m.content.startsWith('[tool result cleared'));
    assert.equal(stubs.length, r.stats.clearedResults);
    // the pressure the request caused came before its response, with the same gauge text
    const last = d.events.filter(isPressure(sid)).pop();
    assert.equal(last.params.projectedTokens, r.stats.projectedTokens, 'the last pressure before the response is the request\'s');
    assert.deepEqual(last.params.display, r.stats.display);
    const used = r.stats.prefixTokens + r.stats.projectedTokens;
    assert.match(r.stats.display.text, new RegExp(`^${Math.round(r.stats.pressure * 100)}% · [\\d.]+k/32k$`));
    assert.equal(r.stats.display.used, `${(Math.round(used / 100) / 10).toString()}k`, `display.used counts the prefix: ${used}`);
  });

  await t.test('projectionStats reports §9 stats', async () => {
    statsBefore = await conn.sendRequest('vtcode/projectionStats', { sessionId: sid });
    for (const f of STATS_FIELDS) assert.ok(f in statsBefore, `stats.${f}`);
    assert.equal(statsBefore.messages, 40);
    assert.equal(statsBefore.reservedOutput, 4096);
    assert.equal(statsBefore.compactions, 0);
    assert.ok(STATES.includes(statsBefore.state));
    const want = (statsBefore.projectedTokens + statsBefore.prefixTokens) / (statsBefore.capacity - statsBefore.reservedOutput);
    assert.ok(Math.abs(statsBefore.pressure - want) < 1e-6, `pressure ${statsBefore.pressure} = ${want}`);
  });

  await t.test('cancellation: a cancelled compact answers -32800 and changes nothing', async () => {
    // The compact request is queued behind a compaction preview of the same
    // session (requests of one session run in arrival order; a preview runs
    // a whole compaction and commits nothing), and cancelled right away, so
    // the cancel arrives while the request waits for its turn.
    const cts = new rpc.CancellationTokenSource();
    const token = 'cancel-test';
    const ahead = conn.sendRequest('vtcode/compact', { sessionId: sid, preview: true });
    const p = conn.sendRequest('vtcode/compact', { sessionId: sid, workDoneToken: token }, cts.token);
    // The rejection may come before the request ahead is answered (the
    // server answers a cancelled queued request at once): handle it from
    // the start.
    const rejected = assert.rejects(p, (err) => {
      assert.equal(err.code, -32800, `code ${err.code}: ${err.message}`);
      return true;
    });
    cts.cancel();
    await ahead;
    await rejected;
    const after = await conn.sendRequest('vtcode/projectionStats', { sessionId: sid });
    assert.deepEqual(after, statsBefore, 'stats unchanged');
    const arts = await conn.sendRequest('vtcode/listArtifacts', { sessionId: sid });
    assert.equal(arts.length, 0, 'no artifact written');
  });

  await t.test('cancellation during compaction progress: -32800 or a completed compaction, never half', async () => {
    const cts = new rpc.CancellationTokenSource();
    const token = 'cancel-in-flight';
    const begun = d.waitFor((e) => e.method === '$/progress' && e.params.token === token && e.params.value.kind === 'begin', 'begin');
    const p = conn.sendRequest('vtcode/compact', { sessionId: sid, workDoneToken: token }, cts.token);
    await Promise.race([begun, p.catch(() => undefined)]);
    cts.cancel();
    let cancelled = false;
    try {
      await p;
    } catch (err) {
      assert.equal(err.code, -32800, `code ${err.code}: ${err.message}`);
      cancelled = true;
    }
    const after = await conn.sendRequest('vtcode/projectionStats', { sessionId: sid });
    const arts = await conn.sendRequest('vtcode/listArtifacts', { sessionId: sid });
    if (cancelled) {
      assert.deepEqual(after, statsBefore, 'stats unchanged after a cancelled compaction');
      assert.equal(arts.length, 0);
    } else {
      t.diagnostic('the compaction finished before the cancel arrived; restoring');
      assert.equal(after.compactions, 1);
      assert.equal(arts.length, 1);
      await conn.sendRequest('vtcode/restore', { sessionId: sid, artifactId: arts[0].artifactId });
      statsBefore = await conn.sendRequest('vtcode/projectionStats', { sessionId: sid });
    }
  });

  await t.test('compact with a workDoneToken: progress begin/end and the result', async () => {
    const token = 'compact-1';
    const compactions = statsBefore.compactions;
    compactMark = d.events.length;
    compactResult = await conn.sendRequest('vtcode/compact', { sessionId: sid, workDoneToken: token });
    const r = compactResult;
    assert.equal(r.mode, 'local');
    assert.equal(r.strategy, 'local');
    assert.equal(r.trigger, 'manual');
    assert.equal(r.originalMessageCount, statsBefore.messages);
    assert.ok(r.compactedMessageCount < r.originalMessageCount, `${r.compactedMessageCount} < ${r.originalMessageCount}`);
    assert.ok(r.compactedTokens < r.originalTokens);
    assert.ok(r.artifactId, 'artifactId');
    assert.equal(typeof r.elapsedMs, 'number');
    assert.match(r.message, /^Context compacted · /);
    // progress: begin, reports, end (notifications may trail the response a little)
    await d.waitFor((e) => e.method === '$/progress' && e.params.token === token && e.params.value.kind === 'end', 'progress end');
    const values = progressOf(d.events, token);
    assert.ok(values.length >= 2, `progress values: ${JSON.stringify(values)}`);
    assert.deepEqual({ kind: values[0].kind, title: values[0].title }, { kind: 'begin', title: 'Compacting context...' });
    assert.equal(values[0].cancellable, true);
    const end = values[values.length - 1];
    assert.equal(end.kind, 'end');
    assert.match(end.message, /^Context compacted · [\d.]+s \(\d+ -> \d+ messages, local\)/);
    for (const v of values.slice(1, -1)) assert.equal(v.kind, 'report');
    const stats = await conn.sendRequest('vtcode/projectionStats', { sessionId: sid });
    assert.equal(stats.compactions, compactions + 1);
    assert.equal(stats.messages, r.compactedMessageCount);
    assert.equal(stats.lastCompaction.artifactId, r.artifactId);
  });

  await t.test('after compaction: tokenPressure, compactBoundary, artifact, restore', async () => {
    const r = compactResult;
    await d.waitFor(isPressure(sid, (p) => p.originalTokens < statsBefore.originalTokens / 2), 'tokenPressure after compact', 15000, compactMark);
    const b = await d.waitFor((e) => e.method === 'vtcode/compactBoundary' && e.params.artifactId === r.artifactId, 'compactBoundary');
    assert.equal(b.params.trigger, 'manual');
    assert.equal(b.params.compactedMessageCount, r.compactedMessageCount);
    const arts = await conn.sendRequest('vtcode/listArtifacts', { sessionId: sid });
    const art = arts.find((a) => a.artifactId === r.artifactId);
    assert.ok(art, 'the artifact is listed');
    assert.equal(art.messages, r.originalMessageCount);
    const mark = d.events.length;
    const restored = await conn.sendRequest('vtcode/restore', { sessionId: sid, artifactId: r.artifactId });
    assert.equal(restored.messages, r.originalMessageCount);
    const stats = await conn.sendRequest('vtcode/projectionStats', { sessionId: sid });
    assert.equal(stats.messages, r.originalMessageCount);
    await d.waitFor(isPressure(sid, (p) => p.originalTokens > 20000), 'tokenPressure after restore', 15000, mark);
  });

  await t.test('server-created progress for automatic compaction (window/workDoneProgress/create)', async () => {
    const o = await conn.sendRequest('vtcode/openSession', { contextWindow: 32000 });
    await conn.sendRequest('vtcode/setPolicy', { sessionId: o.sessionId, policy: { toolResultClearing: { enabled: false } } });
    await conn.sendRequest('vtcode/appendMessages', { sessionId: o.sessionId, messages: agentSession(18, 'b') });
    const created = d.events.filter((e) => e.method === 'window/workDoneProgress/create').length;
    const r = await conn.sendRequest('vtcode/prepareRequest', { sessionId: o.sessionId });
    assert.ok(r.compaction, 'prepareRequest reports the automatic compaction');
    assert.equal(r.compaction.trigger, 'auto');
    const creates = d.events.filter((e) => e.method === 'window/workDoneProgress/create');
    assert.equal(creates.length, created + 1, 'the server created one progress token');
    const token = creates[creates.length - 1].params.token;
    await d.waitFor((e) => e.method === '$/progress' && e.params.token === token && e.params.value.kind === 'end', 'progress end');
    const values = progressOf(d.events, token);
    assert.equal(values[0].kind, 'begin');
    assert.equal(values[0].title, 'Compacting context...');
    assert.equal(values[values.length - 1].kind, 'end');
    assert.ok(r.stats.projectedTokens < 20000);
  });

  await t.test('a compaction with nothing to gain is a no-op: "Conversation is already compact."', async () => {
    const o = await conn.sendRequest('vtcode/openSession', { contextWindow: 32000 });
    await conn.sendRequest('vtcode/appendMessages', { sessionId: o.sessionId, messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] });
    const r = await conn.sendRequest('vtcode/compact', { sessionId: o.sessionId, workDoneToken: 'noop' });
    assert.equal(r.message, 'Conversation is already compact.');
    assert.equal(r.artifactId, '');
    assert.equal(r.compactedMessageCount, 2);
    await d.waitFor((e) => e.method === '$/progress' && e.params.token === 'noop' && e.params.value.kind === 'end', 'progress end');
    assert.deepEqual(await conn.sendRequest('vtcode/listArtifacts', { sessionId: o.sessionId }), []);
  });

  await t.test('errors: unknown session -32001, bad policy -32602 naming the field', async () => {
    await assert.rejects(conn.sendRequest('vtcode/projectionStats', { sessionId: 'no-such-session' }), (e) => e.code === -32001);
    await assert.rejects(conn.sendRequest('vtcode/setPolicy', { sessionId: sid, policy: { toolResultClearing: { keepToolUses: -1 } } }),
      (e) => e.code === -32602 && /toolResultClearing\.keepToolUses/.test(e.message));
  });

  await t.test('shutdown and exit: exit code 0', async () => {
    const r = await d.close();
    assert.equal(r.code, 0);
  });
});

test('without window.workDoneProgress the server creates no progress tokens', async (t) => {
  const d = await startDaemon({ workDoneProgress: false });
  t.after(() => d.close());
  const o = await d.conn.sendRequest('vtcode/openSession', { contextWindow: 32000 });
  await d.conn.sendRequest('vtcode/setPolicy', { sessionId: o.sessionId, policy: { toolResultClearing: { enabled: false } } });
  await d.conn.sendRequest('vtcode/appendMessages', { sessionId: o.sessionId, messages: agentSession(18, 'c') });
  const r = await d.conn.sendRequest('vtcode/prepareRequest', { sessionId: o.sessionId });
  assert.ok(r.compaction);
  assert.equal(d.events.filter((e) => e.method === 'window/workDoneProgress/create').length, 0);
});

test('vtcode.proxy.listen: initializationOptions.proxy starts the in-process proxy and reports its address', async (t) => {
  const d = await startDaemon({ initializationOptions: { proxy: { listen: '127.0.0.1:0' } } });
  t.after(() => d.close());
  const note = await d.waitFor((e) => e.method === 'window/logMessage' && /^vtcode-ls proxy listening on /.test(e.params.message), 'the proxy address');
  const url = note.params.message.replace('vtcode-ls proxy listening on ', '');
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const stats = await (await fetch(url + '/vtcode-ls/stats')).json();
  assert.equal(stats.requests, 0);
  // A provider the user configuration does not name is not reachable: a 404 in the API's error shape.
  const resp = await fetch(url + '/p/nowhere/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-session-id': 'ses_test' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(resp.status, 404);
  assert.equal((await resp.json()).type, 'error');
});
