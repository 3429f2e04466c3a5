// Drives code-server with headless Debian chromium through playwright-core (run by scripts/e2e.sh).
// node e2e.cjs --base URL --folder DIR [--tests-base URL --tests-folder DIR --dev EXT_DIR --tests TESTS.cjs] --out DIR
//  (a) --tests: the extension's own tests (run(): Promise) in the real extension host of the
//      code-server at --tests-base (started with --vscode-option enable-smoke-test-driver).
//  (b) the UI test on the code-server at --base, through the command palette, as a user sees it;
//      with --fakeagent, --bin and --proxy (the user configuration's [proxy] listen), a scripted
//      agent through the shared daemon's proxy (as `vtcode-ls status` reports it), and ask mode.
//  (d) with --shared-base: two windows (--folder-a, --folder-b) on the shared daemon, each with its
//      own agent started by `vtcode-ls run` (--bin).
// Writes screenshots and page text into --out, and "N passed, N failed" into out/summary.txt.
const { chromium } = require('playwright-core');
const { execFile } = require('child_process');
const fs = require('fs'), os = require('os'), path = require('path'), util = require('util');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].slice(2)] = process.argv[i + 1];
const out = args.out || '.';
fs.mkdirSync(out, { recursive: true });
const t0 = Date.now();
const log = (...a) => console.log(`[e2e ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
let passed = 0, failed = 0;

async function check(name, fn) {
  try { await fn(); passed++; log('PASS', name); }
  catch (e) { failed++; log('FAIL', name, '-', (e.message || String(e)).split('\n').slice(0, 3).join(' | ')); }
}

// One fresh headless chromium (own profile) per phase, one tab, so that it has focus.
async function withBrowser(fn) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1400, height: 900 },
  });
  try { const page = ctx.pages()[0] || await ctx.newPage(); await page.bringToFront(); await fn(page); }
  finally { await ctx.close(); fs.rmSync(profile, { recursive: true, force: true }); }
}

async function runCommand(page, label) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: 15000 });
  await input.fill('>' + label);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().waitFor({ timeout: 15000 });
  await page.keyboard.press('Enter');
}

const shot = (page, name) => page.screenshot({ path: path.join(out, name) });

// Records the text of every notification toast ever shown (progress notifications of a fast
// compaction may live for a few milliseconds only).
function recordNotifications() {
  window.__toasts = [];
  const push = (s) => { s = (s || '').replace(/\s+/g, ' ').trim(); if (s && !window.__toasts.includes(s)) window.__toasts.push(s); };
  const collect = (root) => {
    if (!root || root.nodeType !== 1) return;
    const items = root.matches('.notification-list-item-message') ? [root] : root.querySelectorAll('.notification-list-item-message');
    for (const el of items) push(el.textContent);
  };
  const start = () => new MutationObserver((muts) => {
    for (const m of muts) {
      const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
      if (el && el.closest && el.closest('.notifications-toasts')) collect(el.closest('.notification-list-item') || el);
      for (const n of m.addedNodes) collect(n);
    }
  }).observe(document.documentElement, { subtree: true, childList: true, characterData: true });
  if (document.documentElement) start(); else document.addEventListener('DOMContentLoaded', start);
}

const statusItem = (page) => page.locator('[aria-label^="VT Code context:"]').first();
async function statusTextMatching(page, re, timeout = 30000, also = () => true) {
  const item = statusItem(page);
  const deadline = Date.now() + timeout;
  let last = '';
  while (Date.now() < deadline) {
    last = ((await item.innerText({ timeout: 5000 }).catch(() => '')) || '').replace(/\s+/g, ' ').trim();
    if (re.test(last) && also(last)) return last;
    await page.waitForTimeout(200);
  }
  throw new Error(`status bar text ${JSON.stringify(last)} does not match ${re}`);
}
// The gauge ("62% · 78.1k/128k") a test agent's toast reports: the daemon's figures of the
// session's last prepared request, which the status bar and the context view must both show.
const gaugeOf = (toastText) => {
  const m = / · gauge (.+)$/.exec(toastText.replace(/\s+/g, ' ').trim());
  if (!m) throw new Error(`no gauge in the toast ${JSON.stringify(toastText)}`);
  return m[1];
};
const exactly = (s) => new RegExp('^' + s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$');
// The status-bar tooltip's text, whitespace folded ("Requests billed 20"), once it holds `want`.
async function tooltipText(page, want, timeout = 30000) {
  const hover = page.locator('.monaco-hover, .workbench-hover').filter({ hasText: want }).first();
  const deadline = Date.now() + timeout;
  for (;;) {
    await page.mouse.move(10, 10);
    await statusItem(page).hover();
    if (await hover.waitFor({ timeout: 5000 }).then(() => true, () => false)) return (await hover.innerText()).replace(/\s+/g, ' ').trim();
    if (Date.now() > deadline) {
      const seen = await page.locator('.monaco-hover, .workbench-hover').first().innerText().catch(() => '');
      throw new Error(`the tooltip does not show ${want}: ${JSON.stringify(seen.replace(/\s+/g, ' '))}`);
    }
  }
}
// runs a helper process to its end; rejects with its output when it fails
const runProcess = (file, argv, env = {}) => new Promise((resolve, reject) => {
  execFile(file, argv, { env: { ...process.env, ...env }, timeout: 120000 }, (err, stdout, stderr) => {
    if (err) reject(new Error(`${path.basename(file)} ${argv.join(' ')}: ${err.message} ${stderr}`));
    else resolve(stdout.trim());
  });
});
const toast = (page, text, timeout = 30000) =>
  page.locator('.notifications-toasts').getByText(text).filter({ visible: true }).first().waitFor({ timeout });

(async () => {
  // (a) the extension's own tests in the real (remote, Node) extension host
  if (args.tests) await withBrowser((page) => check('extension-host tests (' + path.basename(args.tests) + ')', async () => {
    const authority = new URL(args['tests-base']).host;
    const remote = (p) => `vscode-remote://${authority}${p}`;
    let exit; const exited = new Promise((r) => (exit = r));
    const lines = [];
    await page.exposeFunction('codeAutomationLog', (type, a) => lines.push(util.format(...(a || []))));
    await page.exposeFunction('codeAutomationExit', (code) => exit(code));
    const payload = JSON.stringify([['extensionDevelopmentPath', remote(args.dev)], ['extensionTestsPath', remote(args.tests)]]);
    await page.goto(`${args['tests-base']}/?folder=${encodeURIComponent(args['tests-folder'] || args.folder)}&payload=${encodeURIComponent(payload)}`);
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), +(process.env.TESTS_TIMEOUT_MS || 180000)))]);
    fs.writeFileSync(path.join(out, 'extension-host-tests.log'), lines.join('\n') + '\n');
    for (const l of lines) if (/^(ok|not ok) - |^host tests:/.test(l)) console.log('  | ' + l.split('\n')[0]);
    await shot(page, '00-extension-host-tests.png');
    if (code !== 0) throw new Error('extension host exit code ' + code);
  }));

  // (b) the UI, as a user sees it
  await withBrowser(async (page) => {
    await page.addInitScript(recordNotifications);
    let before = '', after = '';
    await check('workbench loads; the status bar shows VT Code without a session', async () => {
      await page.goto(`${args.base}/?folder=${encodeURIComponent(args.folder)}`);
      await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: 120000 });
      await statusTextMatching(page, /^VT Code$/, 60000);
      await shot(page, '01-no-session.png');
    });
    await check('a test agent sends 40 turns through the extension API; the status bar shows the pressure', async () => {
      await runCommand(page, 'VT Code Test Agent: Send Turns');
      const sent = page.locator('.notifications-toasts').getByText(/Test agent: sent 40 messages to session/).filter({ visible: true }).first();
      await sent.waitFor({ timeout: 30000 });
      // the status bar comes to show the same session's figures (no fixed wait)
      before = await statusTextMatching(page, exactly(gaugeOf(await sent.innerText())));
      log('status before compaction:', before);
      await page.waitForTimeout(500);
      await shot(page, '02-pressure-before.png');
    });
    await check('the status-bar tooltip shows the stats', async () => {
      await page.mouse.move(10, 10);
      await statusItem(page).hover();
      await page.locator('.monaco-hover, .workbench-hover').getByText('Click to compact the context.').first().waitFor({ timeout: 15000 });
      await page.locator('.monaco-hover, .workbench-hover').getByText('Compaction threshold').first().waitFor({ timeout: 15000 });
      await shot(page, '03-tooltip.png');
      await page.mouse.move(700, 400);
    });
    await check('VT Code: Compact Context shows progress, the result and the new pressure', async () => {
      await page.evaluate(() => { window.__toasts.length = 0; });
      await runCommand(page, 'VT Code: Compact Context');
      // VS Code keeps a progress notification up for at least 800 ms, so even a fast compaction
      // can be caught on screen; the recorder above is the fallback.
      const progress = page.locator('.notifications-toasts .notification-list-item', { hasText: 'Compacting context...' }).filter({ visible: true }).first();
      if (await progress.waitFor({ timeout: 3000 }).then(() => true, () => false)) {
        await shot(page, '04-progress.png');
        log('progress notification on screen:', (await progress.innerText().catch(() => '')).replace(/\s+/g, ' '));
      }
      await toast(page, /Context compacted · [\d.]+s \(40 -> \d+ messages, local\)/);
      await progress.waitFor({ state: 'hidden', timeout: 15000 });
      const seen = await page.evaluate(() => window.__toasts);
      fs.writeFileSync(path.join(out, 'notifications.txt'), seen.join('\n') + '\n');
      if (!seen.some((s) => s.includes('Compacting context...'))) throw new Error('no "Compacting context..." progress notification among: ' + JSON.stringify(seen));
      // awaits the drop (the pressure of the compacted session), without a fixed wait
      after = await statusTextMatching(page, /^\d+% · [\d.]+k\/32k$/, 30000, (t) => parseInt(t, 10) < parseInt(before, 10))
        .catch((e) => { throw new Error(`pressure did not drop from ${before}: ${e.message}`); });
      log('status after compaction:', after);
      await page.waitForTimeout(500);
      await shot(page, '05-compacted.png');
    });
    await check('VT Code: Show Projection Stats shows the numbers', async () => {
      await runCommand(page, 'VT Code: Show Projection Stats');
      await toast(page, /Session .* · \d+% · [\d.]+k\/32k tokens · \d+ of \d+ messages sent · .* · 1 compaction · state/);
      await page.waitForTimeout(500);
      await shot(page, '06-stats.png');
    });
    await check('VT Code: Restore History… lists the artifact', async () => {
      await runCommand(page, 'VT Code: Restore History…');
      await page.locator('.quick-input-list .monaco-list-row', { hasText: '40 messages · manual compaction (local)' }).first().waitFor({ timeout: 15000 });
      await shot(page, '07-restore-pick.png');
      await page.keyboard.press('Escape');
    });
    await check('VT Code: Select Session… lists the session', async () => {
      await runCommand(page, 'VT Code: Select Session…');
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Follow the most recently updated session' }).first().waitFor({ timeout: 15000 });
      await page.locator('.quick-input-list .monaco-list-row', { hasText: /messages · updated/ }).first().waitFor({ timeout: 15000 });
      await shot(page, '08-select-session.png');
      await page.keyboard.press('Escape');
    });
    await check('an automatic compaction while the agent prepares a request shows a progress notification', async () => {
      await page.evaluate(() => { window.__toasts.length = 0; });
      await runCommand(page, 'VT Code Test Agent: Send Turns Past the Compaction Threshold');
      await toast(page, /Test agent: prepared \d+ messages; automatic compaction: auto, 40 -> \d+/);
      const seen = await page.evaluate(() => window.__toasts);
      fs.appendFileSync(path.join(out, 'notifications.txt'), '--- automatic compaction\n' + seen.join('\n') + '\n');
      if (!seen.some((s) => s.includes('Compacting context...'))) throw new Error('no "Compacting context..." progress notification among: ' + JSON.stringify(seen));
      await page.locator('.part.statusbar').getByText(/Context compacted · /).first().waitFor({ timeout: 15000 });
      await page.waitForTimeout(300);
      await shot(page, '09-automatic-compaction.png');
    });

    // The context view (issue 14): a session prepared request by request, shown in the webview,
    // followed live through a compaction and a restore; then a compaction preview applied as edited.
    const view = () => page.frameLocator('iframe.webview').first().frameLocator('#active-frame');
    let requests = 0;
    await check('VT Code: Show Context shows the window by category, the pressure per request and the cleared results', async () => {
      await runCommand(page, 'VT Code Test Agent: Send Turns Step by Step');
      const t = page.locator('.notifications-toasts').getByText(/Test agent: prepared \d+ requests in session/).filter({ visible: true }).first();
      await t.waitFor({ timeout: 30000 });
      const said = await t.innerText();
      requests = +said.match(/prepared (\d+) requests/)[1];
      // the status bar comes to show this session's figures of its last request (no fixed wait)
      const status = await statusTextMatching(page, exactly(gaugeOf(said)));
      // opened from the status-bar tooltip's link
      await page.mouse.move(10, 10);
      await statusItem(page).hover();
      const link = page.locator('.monaco-hover, .workbench-hover').getByRole('link', { name: /Show Context/ }).first();
      await link.waitFor({ timeout: 15000 });
      await link.click();
      const v = view();
      await v.locator('#title', { hasText: /^Session / }).waitFor({ timeout: 30000 });
      const headline = (await v.locator('#headline').innerText()).trim();
      log('context headline:', headline, '| status bar:', status);
      if (!headline.startsWith(status + ' tokens · ')) throw new Error(`headline ${JSON.stringify(headline)} does not start with the status bar's figures ${status}`);
      if (!headline.includes(`${requests} requests`)) throw new Error(`headline does not count ${requests} requests: ${headline}`);
      const legend = (await v.locator('#legend').innerText()).replace(/\s+/g, ' ');
      for (const label of ['System prompt & tools', 'User messages', 'Assistant text', 'Tool calls', 'Tool results', 'Cleared stubs', 'Compaction summary', 'Free', 'Reserved output 4,096']) {
        if (!legend.includes(label)) throw new Error(`legend lacks ${label}: ${legend}`);
      }
      const segs = await v.locator('#bar .seg').count();
      if (segs !== 9) throw new Error(`${segs} bar segments`);
      const dots = await v.locator('#chart circle.dot').count();
      if (dots !== requests) throw new Error(`${dots} points on the chart for ${requests} requests`);
      const rows = await v.locator('#cleared tr').count();
      const firstRow = (await v.locator('#cleared tr').first().innerText()).replace(/\s+/g, ' ');
      log(`cleared results: ${rows}; first: ${firstRow}`);
      if (rows === 0 || !/^read_file call_steps_\d+ [\d,]+ [\d,]+ [\d,]+ \d+$/.test(firstRow)) throw new Error(`cleared table: ${rows} rows, first ${JSON.stringify(firstRow)}`);
      await v.locator('#artifacts-empty', { hasText: 'No compaction artifacts yet.' }).waitFor({ timeout: 5000 });
      await page.waitForTimeout(300);
      await shot(page, '10-context.png');
    });
    await check('the context view follows the session live: a compaction is marked and its artifact listed', async () => {
      await runCommand(page, 'VT Code: Compact Context');
      await toast(page, /Context compacted · [\d.]+s \(40 -> \d+ messages, local\)/);
      const v = view();
      await v.locator('#headline', { hasText: '1 compaction' }).waitFor({ timeout: 15000 });
      await v.locator('#chart line.compaction').first().waitFor({ state: 'attached', timeout: 15000 });
      await v.locator('#artifacts tr', { hasText: 'manual (local)' }).getByRole('button', { name: 'Restore' }).waitFor({ timeout: 15000 });
      const summary = (await v.locator('#legend tr[data-category="summary"]').innerText()).replace(/\s+/g, ' ');
      if (!/^Compaction summary [1-9][\d,]* /.test(summary)) throw new Error(`summary row: ${summary}`);
      await page.waitForTimeout(300);
      await shot(page, '11-context-compacted.png');
    });
    await check('Restore in the context view brings the history back', async () => {
      const v = view();
      await v.locator('#artifacts button', { hasText: 'Restore' }).first().click();
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.getByText(/Restore 40 messages from before the manual compaction/).waitFor({ timeout: 15000 });
      await shot(page, '12-restore-confirm.png');
      await dialog.getByRole('button', { name: 'Restore' }).click();
      await toast(page, 'VT Code: history restored (40 messages).');
      await v.locator('#headline', { hasText: /of 40 messages sent/ }).waitFor({ timeout: 15000 });
    });
    await check('VT Code: Preview Compaction shows the summary in an editor; Apply commits it as edited', async () => {
      await runCommand(page, 'VT Code: Preview Compaction');
      await toast(page, /compaction preview · 40 → \d+ messages, [\d.]+k → [\d.]+k tokens\. Edit the summary, then Apply\./);
      await page.locator('.tab', { hasText: 'compaction-summary.md' }).first().waitFor({ timeout: 15000 });
      const lines = page.locator('.editor-group-container.active .monaco-editor .view-lines').first();
      await lines.getByText('## Goal').first().waitFor({ timeout: 15000 });
      await shot(page, '13-preview.png');
      await lines.click();
      await page.keyboard.press('Control+Home');
      await page.keyboard.type('E2E: keep the failing test name. ');
      await lines.getByText(/E2E:\skeep\sthe\sfailing\stest\sname/).first().waitFor({ timeout: 10000 });  // Monaco renders spaces as U+00A0
      await page.locator('.editor-group-container.active .editor-actions [aria-label^="Apply Compaction Preview"]').first().click();
      await toast(page, /Context compacted with the edited summary \(40 -> \d+ messages, local\)/);
      await page.locator('.tab', { hasText: 'compaction-summary.md' }).first().waitFor({ state: 'detached', timeout: 15000 });
      await runCommand(page, 'VT Code: Show Context');
      await view().locator('#headline', { hasText: '2 compactions' }).waitFor({ timeout: 15000 });
      await page.waitForTimeout(300);
      await shot(page, '14-preview-applied.png');
    });

    // An agent through the shared daemon's proxy, which the window attached to: the user reads its
    // address and the workspace's prefix from `vtcode-ls status --json`; the scripted agent makes
    // tool turns of the Messages API there against the fake provider.
    let proxied = '';
    // turns enough for the cache-aware clearing schedule to clear: a step pays once the held
    // results outweigh rewriting the cached tail, and a step the interval held back must still
    // repay in what is left of the session, so a 30-turn session of these files is not cleared
    const PROXIED_TURNS = 50;
    if (args.fakeagent) await check("an agent through the shared daemon's proxy: the status bar follows it, the tooltip shows cache reuse and the receipt", async () => {
      const st = JSON.parse(await runProcess(args.bin, ['status', '--json']));
      if (`http://${st.proxy}` !== args.proxy) throw new Error(`the shared daemon's proxy is ${JSON.stringify(st.proxy)} (${st.proxyError || ''}), not the user configuration's ${args.proxy}`);
      const root = fs.realpathSync(args.folder);
      const ws = (st.workspaces || []).find((w) => w.root === root || w.root === args.folder);
      if (!ws) throw new Error(`vtcode-ls status lists no workspace ${root}: ${JSON.stringify(st.workspaces)}`);
      const base = `http://${st.proxy}${ws.proxyBase}`;
      log('shared daemon:', `pid ${st.pid}, ${st.clients} clients, proxy ${st.proxy}; agent base ${base}`);
      const said = await runProcess(args.fakeagent, ['run', '-session', 'e2e-proxied', '-turns', String(PROXIED_TURNS), '-base', base]);
      if (said !== `fakeagent: ${PROXIED_TURNS} requests in session e2e-proxied`) throw new Error(`the agent said ${JSON.stringify(said)}`);
      // the test agent's sessions above have 32k windows; the proxied one has its model's
      await statusTextMatching(page, /^\d+% · [\d.]+k\/\d+k$/, 60000, (t) => !t.endsWith('/32k'));
      // the tooltip of the session's last request (its receipt counts every request)
      const tip = await tooltipText(page, `Requests billed ${PROXIED_TURNS} `);
      // the status bar shows the same pressure as the tooltip (the session's last request)
      const pressure = (/ Pressure (\d+%) /.exec(tip) || [])[1];
      const status = await statusTextMatching(page, new RegExp(`^${pressure} · [\\d.]+k\\/\\d+k$`), 30000)
        .catch((e) => { throw new Error(`the status bar does not follow the tooltip's pressure ${pressure}: ${e.message}`); });
      proxied = (/session (proxy-\S+)/.exec(tip) || [])[1] || '';
      log('proxied session:', proxied, '| status bar:', status, '| tooltip:', tip);
      if (!proxied) throw new Error('the tooltip names no proxied session: ' + tip);
      if (!/Paid \(list prices[^)]*\) \$[\d.]+ Without vtcode-ls \(estimate\) \$[\d.]+ Saved /.test(tip)) throw new Error('no priced receipt: ' + tip);
      if (!/Tokens billed [\d,]+ in · [\d,]+ cache read/.test(tip)) throw new Error('the receipt shows no cache reads: ' + tip);
      if (!/Prompt-cache hit rate \d+(\.\d+)?%/.test(tip)) throw new Error('no prompt-cache hit rate: ' + tip);
      const reuse = /Cache reuse \(next request\) (.*?) (Requests billed|\|)/.exec(tip);
      if (!reuse || !/^\d+(\.\d+)?% · [\d.]+k of [\d.]+k tokens/.test(reuse[1])) throw new Error('no cache reuse figures: ' + tip);
      log('cache reuse:', reuse[1]);
      await shot(page, '16-proxied-tooltip-receipt.png');
      await page.mouse.move(700, 400);
    });
    if (args.fakeagent) await check('Show Context shows the proxied requests in the timeline and when each result was cleared', async () => {
      await runCommand(page, 'VT Code: Show Context');
      const v = view();
      await v.locator('#title', { hasText: proxied }).waitFor({ timeout: 30000 });
      const headline = (await v.locator('#headline').innerText()).trim();
      const status = await statusItem(page).innerText();
      log('proxied context headline:', headline, '| status bar:', status);
      if (!headline.startsWith(status.trim() + ' tokens · ')) throw new Error(`headline ${JSON.stringify(headline)} does not start with the status bar's figures ${status}`);
      const n = +((/ · (\d+) requests? · /.exec(headline) || [])[1] || 0);
      const rows = await v.locator('#cleared tr').count();
      const turns = await v.locator('#cleared tr td:last-child').allInnerTexts();
      log(`cleared results: ${rows}; cleared at turn: ${turns.join(', ')}`);
      await page.waitForTimeout(300);
      await shot(page, '17-proxied-context.png');
      if (!(n > 0)) throw new Error(`the timeline counts no request of the proxied session: ${headline}`);
      if (rows === 0) throw new Error(`no cleared tool result in a ${PROXIED_TURNS}-turn proxied session`);
      const pending = turns.filter((t) => !/^\d+$/.test(t.trim()));
      if (pending.length) throw new Error(`${pending.length} of ${rows} cleared results not at a turn: ${pending.slice(0, 3).join(', ')}`);
    });
    if (args.fakeagent) await check('ask mode: past the soft threshold the Review / Compact now / Not now notification appears; Review opens the preview', async () => {
      await runCommand(page, 'VT Code Test Agent: Send Turns Past the Soft Threshold in Ask Mode');
      await toast(page, /Test agent: prepared \d+ messages in ask mode; compaction: none/);
      const ask = page.locator('.notifications-toasts .notification-list-item', { hasText: /holds [\d.]+k of [\d.]+k tokens\. Compact it\?/ }).filter({ visible: true }).first();
      await ask.waitFor({ timeout: 30000 });
      for (const b of ['Review', 'Compact now', 'Not now']) await ask.getByRole('button', { name: b }).waitFor({ timeout: 5000 });
      log('proposal:', (await ask.innerText()).replace(/\s+/g, ' '));
      await shot(page, '18-ask-notification.png');
      await ask.getByRole('button', { name: 'Review' }).click();
      await page.locator('.tab', { hasText: 'compaction-summary.md' }).first().waitFor({ timeout: 30000 });
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().getByText('## Goal').first().waitFor({ timeout: 15000 });
      await page.locator('.editor-group-container.active .editor-actions [aria-label^="Apply Compaction Preview"]').first().waitFor({ timeout: 15000 });
      await page.waitForTimeout(300);
      await shot(page, '19-ask-review-preview.png');
    });
    // The shared daemon killed under the window: one message, the window reconnects (a new
    // daemon), reopens its sessions and shows the same session's figures again.
    if (args.bin) await check('the shared daemon killed: one message, the status bar shows the same session again, the agent goes on', async () => {
      await page.keyboard.press('Escape');
      const before = await statusTextMatching(page, /^\d+% · [\d.]+k\/\d+k$/, 30000);
      const old = JSON.parse(await runProcess(args.bin, ['status', '--json']));
      await page.evaluate(() => { window.__toasts.length = 0; });
      process.kill(old.pid, 'SIGKILL');
      await toast(page, /connection to vtcode-ls was lost/, 30000);
      const again = await statusTextMatching(page, exactly(before), 60000)
        .catch((e) => { throw new Error(`the status bar does not show ${before} again: ${e.message}`); });
      const now = JSON.parse(await runProcess(args.bin, ['status', '--json']));
      if (now.pid === old.pid) throw new Error('no new daemon');
      // the test agent's next turn in the session it opened before the kill (no openSession)
      await runCommand(page, 'VT Code Test Agent: Next Turn in the Last Session');
      await toast(page, /Test agent: next turn in session \S+: (\d+ messages|failed)/, 30000);
      const seen = await page.evaluate(() => window.__toasts);
      const turn = seen.find((t) => /^Test agent: next turn in session \S+: \d+ messages/.test(t));
      if (!turn) throw new Error(`the agent's next turn failed: ${JSON.stringify(seen)}`);
      // the status bar follows the session live again: it shows the gauge of that turn
      const live = await statusTextMatching(page, exactly(gaugeOf(turn)), 30000);
      log(`reconnected: daemon ${old.pid} -> ${now.pid}; status bar ${before} -> ${again}, after the next turn ${live}; notifications: ${JSON.stringify(seen)}`);
      const bad = seen.filter((t) => /failed|could not|error/i.test(t));
      if (bad.length) throw new Error(`errors after the kill: ${JSON.stringify(bad)}`);
      const ours = seen.filter((t) => /connection to vtcode-ls/.test(t));
      if (ours.length !== 1) throw new Error(`${ours.length} connection messages after the kill, not 1: ${JSON.stringify(ours)}`);
      await shot(page, '21-reconnected.png');
    });
    fs.writeFileSync(path.join(out, 'page-text.txt'), await page.locator('body').innerText());
    if (failed) await shot(page, 'final.png');
  });
  // (c) the platform-specific package alone, without vtcode.serverPath: the daemon it ships runs
  if (args['bundled-base']) await withBrowser(async (page) => {
    await page.addInitScript(recordNotifications);
    await check('the platform-specific .vsix runs the daemon it ships (no vtcode.serverPath)', async () => {
      await page.goto(`${args['bundled-base']}/?folder=${encodeURIComponent(args['bundled-folder'])}`);
      await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: 120000 });
      await statusTextMatching(page, /^VT Code$/, 60000);
      await runCommand(page, 'VT Code Test Agent: Send Turns');
      await toast(page, /Test agent: sent 40 messages to session/);
      const status = await statusTextMatching(page, /^\d+% · [\d.]+k\/32k$/);
      // the extension's log names the binary it started
      const logs = [];
      const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) walk(p); else if (e.name === 'VT Code.log') logs.push(p); } };
      walk(args['bundled-logs']);
      const started = logs.map((f) => fs.readFileSync(f, 'utf8')).join('\n').match(/starting (\S+)(?: --no-shared)? \(bundled with the extension\)/);
      if (!started) throw new Error('no "starting … (bundled with the extension)" line in ' + JSON.stringify(logs));
      if (!started[1].startsWith(args['bundled-ext'] + path.sep) || !/[\\/]server[\\/]vtcode-ls$/.test(started[1])) throw new Error(`started ${started[1]}, not the packaged daemon`);
      log(`bundled daemon: ${started[1]}; status ${status}`);
      await shot(page, '15-bundled-daemon.png');
    });
  });
  // (d) two windows (workspaces A and B) on the shared daemon, each with its own agent started by
  // `vtcode-ls run --workspace DIR`: each status bar follows its own workspace's agent.
  // They attach to the daemon of the windows above (the user's one daemon).
  if (args['shared-base']) await withBrowser((pageA) => withBrowser(async (pageB) => {
    const windows = [['A', pageA, args['folder-a'], 6], ['B', pageB, args['folder-b'], 14]];
    await check('two windows on the shared daemon load; the status bars show VT Code without a session', async () => {
      for (const [, page, folder] of windows) {
        await page.goto(`${args['shared-base']}/?folder=${encodeURIComponent(folder)}`);
        await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: 120000 });
      }
      for (const [, page] of windows) await statusTextMatching(page, /^VT Code$/, 90000);
    });
    await check('each window follows its own agent (vtcode-ls run, one per workspace)', async () => {
      const said = await Promise.all(windows.map(([name, , folder, turns]) => runProcess(args.bin,
        ['run', '--workspace', folder, '--env', 'VT_BASE', '--', args.fakeagent, 'run', '-session', `e2e-shared-${name}`, '-turns', String(turns), '-base-env', 'VT_BASE'])));
      log('agents:', said.join(' | '));
      // one daemon serves both windows' workspaces
      const st = JSON.parse(await runProcess(args.bin, ['status', '--json']));
      const roots = (st.workspaces || []).map((w) => w.root);
      log('shared daemon:', `pid ${st.pid}, ${st.clients} clients, proxy ${st.proxy}, workspaces ${roots.join(', ')}`);
      for (const [name, , folder] of windows) {
        if (!roots.includes(folder) && !roots.includes(fs.realpathSync(folder))) throw new Error(`vtcode-ls status lists no workspace ${name} (${folder}): ${roots.join(', ')}`);
      }
      const seen = [];
      for (const [name, page, , turns] of windows) {
        await statusTextMatching(page, /^\d+% · [\d.]+k\/\d+k$/, 60000);
        // the window's session is its own agent's: its receipt counts that agent's requests
        const tip = await tooltipText(page, `Requests billed ${turns} `);
        const id = (/session (proxy-\S+)/.exec(tip) || [])[1];
        const pressure = (/ Pressure (\d+%) /.exec(tip) || [])[1];
        const status = await statusTextMatching(page, new RegExp(`^${pressure} · [\\d.]+k\\/\\d+k$`), 30000);
        log(`window ${name}: status ${status}, session ${id}`);
        if (!id) throw new Error(`window ${name}'s tooltip names no proxied session: ${tip}`);
        seen.push([status, id]);
        await pageA.waitForTimeout(300);
        await shot(page, `20-shared-window-${name}.png`);
        await page.mouse.move(700, 400);
      }
      if (seen[0][1] === seen[1][1]) throw new Error(`both windows show session ${seen[0][1]}`);
      if (seen[0][0] === seen[1][0]) throw new Error(`both windows show ${seen[0][0]} for agents of 6 and 14 turns`);
    });
  }));
  const line = `${passed} passed, ${failed} failed`;
  fs.writeFileSync(path.join(out, 'summary.txt'), line + '\n');
  console.log(line);
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.error(e); fs.writeFileSync(path.join(out, 'summary.txt'), `${passed} passed, ${failed + 1} failed\n`); process.exit(1); });
