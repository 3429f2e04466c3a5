// Starts the real vtcode-ls (VTCODE_LS_BIN) over stdio and connects vscode-jsonrpc to it, the
// library vscode-languageclient uses. Collects notifications and server->client requests.
const cp = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const rpc = require('vscode-jsonrpc/node');

function daemonBin() {
  const bin = process.env.VTCODE_LS_BIN;
  if (!bin) throw new Error('VTCODE_LS_BIN is not set: build the daemon (go build -o bin/vtcode-ls ./cmd/vtcode-ls) and point VTCODE_LS_BIN at it');
  if (!fs.existsSync(bin)) throw new Error(`VTCODE_LS_BIN=${bin} does not exist`);
  return bin;
}

/**
 * startDaemon spawns `vtcode-ls serve` (or `args`) in a fresh workspace folder with a private HOME
 * (or those of `root`, which close then leaves in place), and returns { conn, proc, ws, events,
 * waitFor, stderr, close }. `events` holds every notification and server request as
 * {type, method, params}. `env` adds to the environment.
 */
async function startDaemon({ initialize = true, workDoneProgress = true, initializationOptions, args = ['serve'], root: given, env = {} } = {}) {
  const root = given ?? fs.mkdtempSync(path.join(os.tmpdir(), 'vtcode-proto-'));
  const ws = path.join(root, 'ws');
  const home = path.join(root, 'home');
  fs.mkdirSync(ws, { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  const proc = cp.spawn(daemonBin(), args, {
    cwd: ws,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), ...env },
  });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
  const events = [];
  const waiters = new Set();
  const push = (ev) => {
    events.push(ev);
    for (const w of [...waiters]) if (w.pred(ev)) { waiters.delete(w); clearTimeout(w.timer); w.resolve(ev); }
  };
  conn.onNotification((method, params) => push({ type: 'notification', method, params }));
  conn.onRequest('window/workDoneProgress/create', (params) => { push({ type: 'request', method: 'window/workDoneProgress/create', params }); return null; });
  conn.onRequest((method, params) => { push({ type: 'request', method, params }); return null; });
  conn.onUnhandledProgress((p) => push({ type: 'notification', method: '$/progress', params: p }));
  conn.listen();

  /** waitFor resolves with the first event from index `since` on (seen or future) matching pred. */
  function waitFor(pred, what = 'event', timeoutMs = 15000, since = 0) {
    const seen = events.slice(since).find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const w = { pred, resolve };
      w.timer = setTimeout(() => { waiters.delete(w); reject(new Error(`timed out waiting for ${what}; stderr:\n${stderr.slice(-2000)}`)); }, timeoutMs);
      waiters.add(w);
    });
  }

  let init;
  if (initialize) {
    init = await conn.sendRequest('initialize', {
      processId: process.pid,
      clientInfo: { name: 'vtcode-protocol-test' },
      rootUri: pathToFileURL(ws).href,
      workspaceFolders: [{ uri: pathToFileURL(ws).href, name: 'ws' }],
      capabilities: { window: { workDoneProgress } },
      initializationOptions,
    });
    await conn.sendNotification('initialized', {});
  }

  async function close() {
    try {
      await Promise.race([conn.sendRequest('shutdown'), new Promise((r) => setTimeout(r, 3000))]);
      await conn.sendNotification('exit');
    } catch { /* already gone */ }
    const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
    const r = await exited;
    clearTimeout(t);
    conn.dispose();
    if (given === undefined) fs.rmSync(root, { recursive: true, force: true });
    return r;
  }

  return { conn, proc, ws, root, init, events, waitFor, stderr: () => stderr, close, exited };
}

/** progressOf returns the $/progress values seen for token, in order. */
function progressOf(events, token) {
  return events.filter((e) => e.method === '$/progress' && e.params.token === token).map((e) => e.params.value);
}

module.exports = { startDaemon, progressOf, daemonBin };
