#!/usr/bin/env node
// THROWAWAY development fake of vtcode-ls (SPEC §10 subset), used only while the Go daemon does
// not exist yet. The real tests run against the real daemon.
const rpc = require('vscode-jsonrpc/node');
const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(process.stdin), new rpc.StreamMessageWriter(process.stdout));
const sessions = new Map(); let n = 0; let wdp = false; let prompt = null; let folder = '/';
const est = (m) => 4 + Math.ceil(JSON.stringify(m.content ?? '').length / 4) + (m.toolCalls ? 20 * m.toolCalls.length : 0);
function stats(s) {
  const tok = s.msgs.reduce((a, m) => a + est(m), 0);
  const cap = s.cw, eff = cap ? cap - 4096 : 0, pressure = eff ? tok / eff : 0, thr = Math.round(eff * 0.75);
  return { sessionId: s.id, messages: s.msgs.length, projectedMessages: s.msgs.length, originalTokens: tok, projectedTokens: tok,
    prefixTokens: 0, clearedResults: 0, protectedResults: 0, protectedBatches: 0, clearedInputs: 0, localTrigger: 40000, historyBudget: eff,
    capacity: cap, reservedOutput: 4096, compactionThreshold: thr, pressure, state: pressure * 1 >= 0.75 ? 'critical' : pressure >= 0.675 ? 'warn' : 'ok',
    strategy: 'local', compactions: s.compactions, lastCompaction: s.last };
}
function pressure(s) { const st = stats(s); conn.sendNotification('vtcode/tokenPressure', { sessionId: s.id, workspace: folder, projectedTokens: st.projectedTokens, originalTokens: st.originalTokens, capacity: st.capacity, pressure: st.pressure, state: st.state }); }
const get = (id) => { const s = sessions.get(id); if (!s) throw new rpc.ResponseError(-32001, 'unknown session: ' + id); return s; };
conn.onRequest('initialize', (p) => { wdp = !!p.capabilities?.window?.workDoneProgress; if (p.rootUri) folder = new URL(p.rootUri).pathname; return { serverInfo: { name: 'vtcode-ls', version: 'fake' }, capabilities: { experimental: { vtcode: { protocolVersion: 1, methods: [] } } } }; });
conn.onNotification('initialized', () => {});
conn.onRequest('shutdown', () => null);
conn.onNotification('exit', () => process.exit(0));
conn.onRequest('vtcode/openSession', (p) => { const id = p.sessionId || 'fake-' + (++n); let s = sessions.get(id); const resumed = !!s; if (!s) { s = { id, msgs: [], cw: p.contextWindow || 128000, compactions: 0, arts: [], updatedAt: new Date() }; sessions.set(id, s); } return { sessionId: id, resumed, messages: s.msgs.length, policy: {} }; });
conn.onRequest('vtcode/listSessions', () => [...sessions.values()].map(s => ({ sessionId: s.id, workspace: folder, messages: s.msgs.length, updatedAt: s.updatedAt.toISOString() })));
conn.onRequest('vtcode/closeSession', (p) => { sessions.delete(p.sessionId); return null; });
conn.onRequest('vtcode/appendMessages', (p) => { const s = get(p.sessionId); s.msgs.push(...p.messages); s.updatedAt = new Date(); pressure(s); return { messages: s.msgs.length, historyTokens: stats(s).originalTokens }; });
conn.onRequest('vtcode/projectionStats', (p) => stats(get(p.sessionId)));
conn.onRequest('vtcode/prepareRequest', (p) => { const s = get(p.sessionId); if (p.messages) s.msgs.push(...p.messages); pressure(s); return { messages: s.msgs, stats: stats(s), trimmed: false }; });
conn.onRequest('vtcode/setPolicy', (p) => { if (sessions.get(p.sessionId)) pressure(sessions.get(p.sessionId)); return p.policy; });
conn.onRequest('vtcode/getPolicy', () => ({}));
conn.onRequest('vtcode/listArtifacts', (p) => get(p.sessionId).arts.map(a => ({ artifactId: a.id, createdAt: a.at, messages: a.msgs.length, trigger: 'manual', mode: 'local' })));
conn.onRequest('vtcode/restore', (p) => { const s = get(p.sessionId); const a = s.arts.find(a => a.id === p.artifactId); if (!a) throw new rpc.ResponseError(-32602, 'artifactId: unknown'); s.msgs = [...a.msgs]; pressure(s); return { messages: s.msgs.length }; });
conn.onRequest('vtcode/compactPrompt', (p) => { if (p.action === 'set') prompt = p.prompt; if (p.action === 'reset') prompt = null; return { prompt: prompt ?? 'Summarize the conversation (default prompt).', isDefault: prompt === null }; });
conn.onRequest('vtcode/compact', async (p, ct) => {
  const s = get(p.sessionId); const t0 = Date.now();
  let token = p.workDoneToken;
  if (token === undefined && wdp) { token = 'srv-' + (++n); await conn.sendRequest('window/workDoneProgress/create', { token }); }
  const prog = (v) => token !== undefined && conn.sendProgress(rpc.WorkDoneProgress ?? new rpc.ProgressType(), token, v);
  conn.sendNotification('$/progress', { token, value: { kind: 'begin', title: 'Compacting context...', cancellable: true } });
  for (let i = 1; i <= 5; i++) { await new Promise(r => setTimeout(r, Number(process.env.FAKE_DELAY_MS || 300))); if (ct.isCancellationRequested) { conn.sendNotification('$/progress', { token, value: { kind: 'end', message: 'Compaction cancelled' } }); throw new rpc.ResponseError(-32800, 'request cancelled'); } conn.sendNotification('$/progress', { token, value: { kind: 'report', message: `Summarizing ${s.msgs.length} messages (local)`, percentage: i * 20 } }); }
  if (s.msgs.length < 4) { conn.sendNotification('$/progress', { token, value: { kind: 'end', message: 'Conversation is already compact.' } }); return { mode: 'local', strategy: 'local', trigger: 'manual', elapsedMs: 0, originalMessageCount: s.msgs.length, compactedMessageCount: s.msgs.length, originalTokens: 0, compactedTokens: 0, artifactId: '', message: 'Conversation is already compact.' }; }
  const before = s.msgs; const ot = stats(s).originalTokens; const aid = 'art-' + (++n); s.arts.push({ id: aid, at: new Date().toISOString(), msgs: before });
  s.msgs = [{ role: 'system', content: 'Previous conversation summary:\n' + (p.instructions || 'summary') }, ...before.slice(-3)];
  s.compactions++; const el = Date.now() - t0;
  const msg = `Context compacted · ${(el / 1000).toFixed(1)}s (${before.length} -> ${s.msgs.length} messages, local). The next request may reuse less of the provider's prompt cache.`;
  s.last = { trigger: 'manual', mode: 'local', strategy: 'local', originalMessageCount: before.length, compactedMessageCount: s.msgs.length, originalTokens: ot, compactedTokens: stats(s).originalTokens, artifactId: aid, elapsedMs: el };
  conn.sendNotification('$/progress', { token, value: { kind: 'end', message: msg } });
  pressure(s);
  return { ...s.last, message: msg };
});
conn.listen();
