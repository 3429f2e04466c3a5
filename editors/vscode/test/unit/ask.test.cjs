// Unit tests of the ask-mode proposal (node --test). Built from src/ask.ts into out/.
const test = require('node:test');
const assert = require('node:assert/strict');
const a = require('../../out/ask.js');

const p = { sessionId: 's1', workspace: '/w', usedTokens: 9226, threshold: 8928, limit: 11904, message: 'm' };

test('proposal: three answers; Review opens the preview editor, Compact now compacts, Not now declines', () => {
  assert.deepEqual([...a.proposalActions], ['Review', 'Compact now', 'Not now']);
  assert.deepEqual(a.proposalStep(p, 'Review'), { kind: 'preview', sessionId: 's1' });
  assert.deepEqual(a.proposalStep(p, 'Compact now'), { kind: 'request', method: 'vtcode/compact', params: { sessionId: 's1' } });
  assert.deepEqual(a.proposalStep(p, 'Not now'), { kind: 'request', method: 'vtcode/declineCompaction', params: { sessionId: 's1' } });
  assert.deepEqual(a.proposalStep(p, undefined), { kind: 'none' }, 'a dismissed notification answers nothing');
});

test('proposal text: the size, the window and what happens meanwhile', () => {
  assert.equal(a.proposalText(p), 'VT Code: session s1 holds 9.2k of 11.9k tokens. Compact it? ' +
    'Until you answer, requests go on with clearing only; at 11.9k it compacts anyway.');
});
