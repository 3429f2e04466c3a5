// Unit tests of the active-session rule (SPEC §14).
const test = require('node:test');
const assert = require('node:assert/strict');
const { SessionTracker } = require('../../out/tracker.js');

const p = (sessionId, o = {}) => ({ sessionId, workspace: '/ws', projectedTokens: 1000, originalTokens: 1200, capacity: 32000, pressure: 0.1, state: 'ok', display: { percent: '10%', used: '1k', window: '32k', text: '10% · 1k/32k' }, ...o });
const info = (sessionId, updatedAt, active) => ({ sessionId, workspace: '/ws', messages: 3, updatedAt, ...(active ? { active } : {}) });

test('the listing\'s active mark picks the session, not the client\'s reading of dates', () => {
  const t = new SessionTracker();
  // the daemon marks the one to follow; updatedAt is not compared here
  assert.equal(t.sessions([info('a', '2026-11-30T12:00:00Z'), info('b', '2026-11-30T11:00:00Z', true)]), 'b');
  assert.equal(t.active, 'b');
  assert.equal(new SessionTracker().sessions([info('a', '2026-11-30T12:00:00Z')]), undefined, 'nothing marked: nothing active');
});

test('no session: nothing active, empty view', () => {
  const t = new SessionTracker();
  assert.equal(t.active, undefined);
  assert.equal(t.view(), undefined);
  assert.equal(t.sessions([]), undefined);
});

test('follows the most recently updated session', () => {
  const t = new SessionTracker();
  const seen = [];
  t.onDidChange((id) => seen.push(id));
  assert.equal(t.sessions([info('new', '2026-11-30T10:00:00Z', true), info('old', '2026-11-30T09:00:00Z')]), 'new');
  assert.equal(t.active, 'new');
  assert.equal(t.pressure(p('other', { pressure: 0.5 })), true);
  assert.equal(t.active, 'other');
  assert.equal(t.view().pressure, 0.5);
  assert.equal(t.pressure(p('other', { pressure: 0.6 })), true, 'update of the active session changes the display');
  assert.deepEqual(seen, ['new', 'other']);
  // a later listSessions answer does not override what notifications told
  assert.equal(t.sessions([info('new', '2026-11-30T10:00:00Z', true)]), undefined);
});

test('a picked session stays active until unpinned', () => {
  const t = new SessionTracker();
  t.pressure(p('a'));
  t.pin('b');
  assert.equal(t.active, 'b');
  assert.ok(t.pinned);
  assert.equal(t.pressure(p('a', { pressure: 0.9 })), false, 'other sessions do not change the display');
  assert.equal(t.active, 'b');
  assert.equal(t.view(), undefined);
  assert.equal(t.pressure(p('b', { pressure: 0.3 })), true);
  assert.equal(t.view().pressure, 0.3);
  t.pin(undefined);
  assert.equal(t.active, 'b', 'unpinned: the last updated session');
  t.pressure(p('a'));
  assert.equal(t.active, 'a');
});

test('forget and reset', () => {
  const t = new SessionTracker();
  t.pressure(p('a'));
  t.forget('a');
  assert.equal(t.active, undefined);
  t.pin('x');
  t.pressure(p('y'));
  t.reset();
  assert.equal(t.active, 'x', 'the pin survives a server restart');
  t.forget('x');
  assert.equal(t.active, undefined);
});

test('stats update the view of the active session', () => {
  const t = new SessionTracker();
  t.opened('s');
  assert.equal(t.stats({ sessionId: 's', projectedTokens: 5, capacity: 10, pressure: 0.5, state: 'warn', originalTokens: 6 }), true);
  assert.equal(t.view().state, 'warn');
  assert.equal(t.stats({ sessionId: 'z', projectedTokens: 5, capacity: 10, pressure: 0.5, state: 'warn', originalTokens: 6 }), false);
});
