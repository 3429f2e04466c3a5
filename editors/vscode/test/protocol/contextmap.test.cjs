// The context map and the compaction preview through vscode-jsonrpc against the real daemon:
// the shapes src/contextmap.ts reads, and "already compact" as a result, not an error.
const test = require('node:test');
const assert = require('node:assert/strict');
const { startDaemon } = require('./daemon.cjs');
const { agentSession } = require('../fixtures.cjs');

test('vtcode/contextMap and vtcode/compact previews', async (t) => {
  const d = await startDaemon();
  t.after(() => d.close());
  const { conn } = d;
  const { sessionId } = await conn.sendRequest('vtcode/openSession', { contextWindow: 32000 });
  const msgs = agentSession(18, 'cm');

  await t.test('the map follows the prepared requests', async () => {
    assert.ok(d.init.capabilities.experimental.vtcode.methods.includes('vtcode/contextMap'));
    await conn.sendRequest('vtcode/setPolicy', { sessionId, policy: { autoCompaction: { enabled: false } } });
    const p1 = await conn.sendRequest('vtcode/prepareRequest', { sessionId, messages: msgs.slice(0, 20), systemPrompt: 'You are a coding agent.' });
    const p2 = await conn.sendRequest('vtcode/prepareRequest', { sessionId, messages: msgs.slice(20), systemPrompt: 'You are a coding agent.' });
    const m = await conn.sendRequest('vtcode/contextMap', { sessionId });
    assert.deepEqual(m.turns.map((x) => x.tokens), [p1, p2].map((p) => p.stats.projectedTokens + p.stats.prefixTokens));
    assert.equal(m.categories.reduce((a, c) => a + c.tokens, 0), 32000);
    assert.equal(m.cleared.length, p2.stats.clearedResults);
    const stubbedIn = (p, id) => p.messages.some((x) => x.toolCallId === id && /^\[tool result cleared/.test(x.content));
    assert.ok(m.cleared.length > 0, 'the second request clears results');
    for (const c of m.cleared) {
      assert.ok(c.tool === 'read_file' && c.originalTokens > c.stubTokens, JSON.stringify(c));
      assert.equal(c.turn, stubbedIn(p1, c.callId) ? 1 : 2, `${c.callId}: the first request that sent it cleared`);
    }
    assert.deepEqual(m.artifacts, []);
  });

  await t.test('a preview commits nothing; applying it with an edited summary does', async () => {
    const p = await conn.sendRequest('vtcode/compact', { sessionId, preview: true });
    assert.ok(p.previewId && p.editable && p.messages.length === p.compactedMessageCount);
    assert.deepEqual(await conn.sendRequest('vtcode/listArtifacts', { sessionId }), []);
    const r = await conn.sendRequest('vtcode/compact', { sessionId, previewId: p.previewId, summary: 'Goal: fix TestHandler.' });
    assert.equal(r.trigger, 'manual');
    const h = await conn.sendRequest('vtcode/history', { sessionId, limit: 1 });
    assert.equal(h.messages[0].content, 'Previous conversation summary:\nGoal: fix TestHandler.');
    const m = await conn.sendRequest('vtcode/contextMap', { sessionId });
    assert.equal(m.compactions.length, 1);
    assert.equal(m.compactions[0].artifactId, r.artifactId);
  });

  await t.test('a stale preview is -32801 (content modified)', async () => {
    await conn.sendRequest('vtcode/appendMessages', { sessionId, messages: agentSession(12, 'cm2').slice(1) });
    const p = await conn.sendRequest('vtcode/compact', { sessionId, preview: true });
    await conn.sendRequest('vtcode/appendMessages', { sessionId, messages: [{ role: 'user', content: 'and one more' }] });
    await assert.rejects(conn.sendRequest('vtcode/compact', { sessionId, previewId: p.previewId }), (e) => e.code === -32801 && /preview again/.test(e.message));
  });

  await t.test('"already compact" is a result with mode "none", not an error', async () => {
    const o = await conn.sendRequest('vtcode/openSession', {});
    await conn.sendRequest('vtcode/appendMessages', { sessionId: o.sessionId, messages: [{ role: 'user', content: 'hi' }] });
    const r = await conn.sendRequest('vtcode/compact', { sessionId: o.sessionId });
    assert.equal(r.mode, 'none');
    assert.equal(r.message, 'Conversation is already compact.');
    const p = await conn.sendRequest('vtcode/compact', { sessionId: o.sessionId, preview: true });
    assert.equal(p.previewId, '');
    assert.equal(p.mode, 'none');
  });
});
