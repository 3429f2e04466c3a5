// After the shared daemon dies, the extension's next connection reopens the sessions it had open
// (src/reopen.ts, the client's sendRequest middleware) before any other request goes out: an
// agent's next request continues its session. Against the real daemon: `vtcode-ls` with no
// arguments attaches to (and starts) a shared daemon of this test's own, which the test kills.
const test = require('node:test');
const assert = require('node:assert/strict');
const cp = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startDaemon, daemonBin } = require('./daemon.cjs');
const { OpenSessions } = require('../../out/reopen.js');
const { agentSession } = require('../fixtures.cjs');

// status runs `vtcode-ls status --json` against the test's daemon folder.
function status(env) {
  const r = cp.spawnSync(daemonBin(), ['status', '--json'], { env: { ...process.env, ...env }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`vtcode-ls status: exit ${r.status}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}

test('after the shared daemon is killed, the next connection reopens the open sessions first; a closed one stays closed', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'vtcode-reopen-'));
  const env = { VTCODE_DAEMON_DIR: fs.mkdtempSync('/tmp/vtcode-reopen-d.') };
  t.after(() => {
    cp.spawnSync(daemonBin(), ['stop'], { env: { ...process.env, ...env } });
    fs.rmSync(env.VTCODE_DAEMON_DIR, { recursive: true, force: true });
    fs.rmSync(root, { recursive: true, force: true });
  });
  const open = new OpenSessions();
  // what the extension's middleware does with each request of a connection
  const via = (d) => (method, params) => open.through(method, params, (p) => d.conn.sendRequest(method, p));

  const first = await startDaemon({ args: [], root, env });
  const send1 = via(first);
  // three agents' sessions; the last one's agent sends the first request after the restart
  const earlier = [];
  for (const tag of ['a', 'b']) {
    const id = (await send1('vtcode/openSession', {})).sessionId;
    await send1('vtcode/appendMessages', { sessionId: id, messages: agentSession(3, tag) });
    earlier.push(id);
  }
  const { sessionId } = await send1('vtcode/openSession', { contextWindow: 32000 });
  await send1('vtcode/appendMessages', { sessionId, messages: agentSession(12, 'reopen') });
  const other = (await send1('vtcode/openSession', {})).sessionId;
  await send1('vtcode/closeSession', { sessionId: other });
  assert.deepEqual(open.ids, [...earlier, sessionId], 'the closed session is not recorded');
  const before = await send1('vtcode/history', { sessionId });

  const old = status(env);
  process.kill(old.pid, 'SIGKILL');
  const gone = await first.exited;
  assert.equal(gone.code, 1, `the forwarder exits 1 when its daemon dies (${first.stderr()})`);
  first.conn.dispose();

  // the editor restarts the connection: a new forwarder, which starts a new daemon
  const second = await startDaemon({ args: [], root, env });
  t.after(() => second.close());
  assert.notEqual(status(env).pid, old.pid, 'a new daemon');
  await assert.rejects(second.conn.sendRequest('vtcode/history', { sessionId }), (e) => e.code === -32001,
    'the new daemon has nothing open until the client reopens it');

  const send2 = via(second);
  const reopening = open.reopen((m, p) => second.conn.sendRequest(m, p));
  // the agent's next request, sent at once: it waits for the reopen instead of failing
  const appended = send2('vtcode/appendMessages', { sessionId, messages: [{ role: 'user', content: 'go on after the restart' }] });
  const result = await reopening;
  assert.deepEqual(result, { reopened: [...earlier, sessionId], failed: [], lost: [] });
  const r = await appended;
  assert.equal(r.messages, before.total + 1, 'the session went on from every acknowledged message');
  const after = await send2('vtcode/history', { sessionId });
  assert.deepEqual(after.messages.slice(0, before.total), before.messages, 'nothing acknowledged was lost');
  assert.equal(after.messages.at(-1).content, 'go on after the restart');
  await assert.rejects(send2('vtcode/history', { sessionId: other }), (e) => e.code === -32001, 'the closed session was not reopened');
  const stats = await send2('vtcode/projectionStats', { sessionId });
  assert.equal(stats.capacity, 32000, 'reopened with its route');
});

test('a session the daemon refuses to reopen is dropped and reported; one the connection lost is kept', async () => {
  const open = new OpenSessions();
  const opened = (id) => open.through('vtcode/openSession', { sessionId: id, model: 'm' }, async () => ({ sessionId: id }));
  await opened('s-1');
  await opened('s-2');
  await opened('s-3');
  const refusal = Object.assign(new Error('session s-2 is busy'), { code: -32004 });
  const closedConn = Object.assign(new Error('Connection is closed.'), { code: -32097 });
  const sent = [];
  const r = await open.reopen(async (method, params) => {
    sent.push([method, params]);
    if (params.sessionId === 's-2') throw refusal;
    if (params.sessionId === 's-3') throw closedConn;
    return { sessionId: params.sessionId };
  });
  assert.deepEqual(sent.map(([m, p]) => [m, p.sessionId, p.model]), [['vtcode/openSession', 's-1', 'm'], ['vtcode/openSession', 's-2', 'm'], ['vtcode/openSession', 's-3', 'm']],
    'each session reopened by id with its route, in the order opened');
  assert.deepEqual(r, { reopened: ['s-1'], failed: [{ sessionId: 's-2', error: refusal }], lost: ['s-3'] });
  assert.deepEqual(open.ids, ['s-1', 's-3'], 'the refused session is dropped, the lost one kept for the next reopen');
});
