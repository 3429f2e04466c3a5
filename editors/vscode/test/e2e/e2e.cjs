// Drives code-server with headless Debian chromium through playwright-core (run by scripts/e2e.sh).
// node e2e.cjs --base URL --folder DIR [--tests-base URL --tests-folder DIR --dev EXT_DIR --tests TESTS.cjs] --out DIR
//  (a) --tests: the extension's own tests (run(): Promise) in the real extension host of the
//      code-server at --tests-base (started with --vscode-option enable-smoke-test-driver).
//  (b) the UI test on the code-server at --base, through the command palette, as a user sees it.
// Writes screenshots and page text into --out, and "N passed, N failed" into out/summary.txt.
const { chromium } = require('playwright-core');
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
  const line = `${passed} passed, ${failed} failed`;
  fs.writeFileSync(path.join(out, 'summary.txt'), line + '\n');
  console.log(line);
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.error(e); fs.writeFileSync(path.join(out, 'summary.txt'), `${passed} passed, ${failed + 1} failed\n`); process.exit(1); });
