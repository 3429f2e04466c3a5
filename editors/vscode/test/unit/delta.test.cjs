// Unit tests of projection deltas (node --test). Built from src/delta.ts into out/.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ProjectionDeltas, projectionDeltaCapability } = require('../../out/delta.js');

const m = (role, content) => ({ role, content });

test('the capability asks for projection deltas', () => {
  assert.deepEqual(projectionDeltaCapability, { vtcode: { projectionDelta: true } });
});

test('ProjectionDeltas: whole projection, then deltas, callers always see the whole projection', () => {
  const d = new ProjectionDeltas();
  assert.deepEqual(d.params({ sessionId: 's', messages: [] }), { sessionId: 's', messages: [] }, 'no base before the first projection');
  const first = d.apply('s', { revision: 'r1', messages: [m('user', 'a'), m('assistant', 'b')], stats: {}, trimmed: false });
  assert.deepEqual(first.messages, [m('user', 'a'), m('assistant', 'b')]);
  assert.equal(first.revision, 'r1');
  assert.equal(d.params({ sessionId: 's' }).baseRevision, 'r1');
  assert.equal(d.params({ sessionId: 'other' }).baseRevision, undefined, 'per session');

  // Keep 1, replace the rest (a cleared result changed the second message).
  const second = d.apply('s', { revision: 'r2', delta: { baseRevision: 'r1', keep: 1, messages: [m('assistant', 'B'), m('user', 'c')] }, stats: {}, trimmed: false });
  assert.deepEqual(second.messages, [m('user', 'a'), m('assistant', 'B'), m('user', 'c')]);
  assert.equal('delta' in second, false, 'callers see no delta');
  first.messages.push(m('user', 'mutated by the caller'));
  second.messages.length = 0; // a caller changing its copy does not change what the client holds
  const third = d.apply('s', { revision: 'r3', delta: { baseRevision: 'r2', keep: 3, messages: [m('assistant', 'd')] }, stats: {}, trimmed: false });
  assert.deepEqual(third.messages, [m('user', 'a'), m('assistant', 'B'), m('user', 'c'), m('assistant', 'd')]);
  assert.equal(d.params({ sessionId: 's', baseRevision: 'stale' }).baseRevision, 'r3', 'the held revision, not the caller\'s');
});

test('ProjectionDeltas: a delta against a projection the client does not hold fails and resets', () => {
  const d = new ProjectionDeltas();
  d.apply('s', { revision: 'r1', messages: [m('user', 'a')], stats: {}, trimmed: false });
  assert.throws(() => d.apply('s', { revision: 'r3', delta: { baseRevision: 'r2', keep: 1, messages: [] }, stats: {}, trimmed: false }), /does not hold/);
  assert.equal(d.params({ sessionId: 's' }).baseRevision, undefined, 'forgotten: the next request gets the whole projection');
  d.apply('s', { revision: 'r1', messages: [m('user', 'a')], stats: {}, trimmed: false });
  assert.throws(() => d.apply('s', { revision: 'r2', delta: { baseRevision: 'r1', keep: 5, messages: [] }, stats: {}, trimmed: false }), /does not hold/);
  d.apply('s', { revision: 'r9', messages: [], stats: {}, trimmed: false });
  d.clear();
  assert.equal(d.params({ sessionId: 's' }).baseRevision, undefined);
});

// The shared transcript: the Neovim plugin's applier replays the same file (editors/neovim/test/spec.lua).
test('ProjectionDeltas replays editors/testdata/projection_deltas.txtar to its projections', () => {
  const text = require('node:fs').readFileSync(require('node:path').join(__dirname, '../../../testdata/projection_deltas.txtar'), 'utf8');
  const sections = [];
  for (const line of text.split('\n')) {
    const h = /^-- (.+) --$/.exec(line);
    if (h) sections.push({ name: h[1], body: '' });
    else if (sections.length) sections[sections.length - 1].body += line + '\n';
  }
  const d = new ProjectionDeltas();
  const got = {};
  let steps = 0;
  for (const { name, body } of sections) {
    if (name === 'want') {
      assert.deepEqual(got, JSON.parse(body), 'the final projections');
      continue;
    }
    const [kind, sid] = name.split(' ');
    const wire = JSON.parse(body);
    steps++;
    if (kind === 'error') {
      assert.throws(() => d.apply(sid, wire), /does not hold/, `step ${steps}: ${name} is refused`);
      assert.equal(d.params({ sessionId: sid }).baseRevision, undefined, `step ${steps}: ${sid} is forgotten`);
      continue;
    }
    assert.equal(kind, 'result', `section ${name}`);
    const r = d.apply(sid, wire);
    assert.equal('delta' in r, false, `step ${steps}: callers see no delta`);
    got[sid] = r.messages;
    assert.equal(d.params({ sessionId: sid }).baseRevision, wire.revision, `step ${steps}: the next baseRevision of ${sid}`);
  }
  assert.equal(steps, 11, 'every step of the transcript was replayed');
});
