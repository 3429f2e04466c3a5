// A stand-in agent: opens a session through the VT Code Context API and sends a 40-message
// history with large tool results (appendMessages + prepareRequest), like an in-editor agent.
const vscode = require('vscode');
const { agentSession } = require('./fixtures.cjs');

// the session the agent opened last, which its next turn goes on in (without opening it again)
let last;

function activate(context) {
  context.subscriptions.push(vscode.commands.registerCommand('vtcodeTestAgent.sendTurns', async () => {
    const ext = vscode.extensions.getExtension('vtcode.vtcode-ls');
    const api = ext.isActive ? ext.exports : await ext.activate();
    const client = await api.ready();
    const { sessionId } = await client.sendRequest('vtcode/openSession', { contextWindow: 32000 });
    last = sessionId;
    const msgs = agentSession(18, 'e2e');
    await client.sendRequest('vtcode/appendMessages', { sessionId, messages: msgs.slice(0, 20) });
    const r = await client.sendRequest('vtcode/prepareRequest', { sessionId, messages: msgs.slice(20), systemPrompt: 'You are a coding agent.' });
    // the daemon's gauge of the prepared request: the status bar must come to show exactly this
    vscode.window.showInformationMessage(`Test agent: sent ${r.stats.messages} messages to session ${sessionId} · gauge ${r.stats.display.text}`);
    return sessionId;
  }));

  // With tool-result clearing off, the 40 messages are over the 32k window's compaction
  // threshold, so prepareRequest compacts automatically, with server-created progress.
  context.subscriptions.push(vscode.commands.registerCommand('vtcodeTestAgent.sendTurnsAuto', async () => {
    const ext = vscode.extensions.getExtension('vtcode.vtcode-ls');
    const api = ext.isActive ? ext.exports : await ext.activate();
    const client = await api.ready();
    const { sessionId } = await client.sendRequest('vtcode/openSession', { contextWindow: 32000 });
    last = sessionId;
    await client.sendRequest('vtcode/setPolicy', { sessionId, policy: { toolResultClearing: { enabled: false } } });
    await client.sendRequest('vtcode/appendMessages', { sessionId, messages: agentSession(18, 'auto') });
    const r = await client.sendRequest('vtcode/prepareRequest', { sessionId, systemPrompt: 'You are a coding agent.' });
    const c = r.compaction;
    vscode.window.showInformationMessage(`Test agent: prepared ${r.messages.length} messages; automatic compaction: ${c ? c.trigger + ', ' + c.originalMessageCount + ' -> ' + c.compactedMessageCount : 'none'}`);
    return sessionId;
  }));

  // A session prepared request by request (tool-result clearing on), for the context view.
  context.subscriptions.push(vscode.commands.registerCommand('vtcodeTestAgent.sendTurnsStepwise', async () => {
    const ext = vscode.extensions.getExtension('vtcode.vtcode-ls');
    const api = ext.isActive ? ext.exports : await ext.activate();
    const client = await api.ready();
    const { sessionId } = await client.sendRequest('vtcode/openSession', { contextWindow: 32000 });
    last = sessionId;
    await client.sendRequest('vtcode/setPolicy', { sessionId, policy: { autoCompaction: { enabled: false } } });
    const msgs = agentSession(18, 'steps');
    let requests = 0, cur = [], r;
    for (let i = 0; i < msgs.length; i++) {
      cur.push(msgs[i]);
      if (i === msgs.length - 1 || (cur.length >= 6 && msgs[i + 1].role !== 'tool')) {
        r = await client.sendRequest('vtcode/prepareRequest', { sessionId, messages: cur, systemPrompt: 'You are a coding agent.' });
        requests++;
        cur = [];
      }
    }
    vscode.window.showInformationMessage(`Test agent: prepared ${requests} requests in session ${sessionId} · gauge ${r.stats.display.text}`);
    return sessionId;
  }));

  // Ask mode (agent.harness.auto_compaction_mode = "ask"): a request past the soft threshold (90 % of
  // the 20k compaction threshold) and under the 64k window's limit is not compacted; the daemon
  // proposes the compaction instead (vtcode/compactionProposed), which the extension asks about.
  context.subscriptions.push(vscode.commands.registerCommand('vtcodeTestAgent.sendTurnsAsk', async () => {
    const ext = vscode.extensions.getExtension('vtcode.vtcode-ls');
    const api = ext.isActive ? ext.exports : await ext.activate();
    const client = await api.ready();
    const { sessionId } = await client.sendRequest('vtcode/openSession', { contextWindow: 64000 });
    last = sessionId;
    await client.sendRequest('vtcode/setPolicy', { sessionId, policy: { autoCompaction: { mode: 'ask', thresholdTokens: 20000 }, toolResultClearing: { enabled: false } } });
    await client.sendRequest('vtcode/appendMessages', { sessionId, messages: agentSession(12, 'ask') });
    const r = await client.sendRequest('vtcode/prepareRequest', { sessionId, systemPrompt: 'You are a coding agent.' });
    vscode.window.showInformationMessage(`Test agent: prepared ${r.messages.length} messages in ask mode; compaction: ${r.compaction ? r.compaction.trigger : 'none'} · gauge ${r.stats.display.text}`);
    return sessionId;
  }));

  // One more turn in the session opened last, as an agent goes on: no openSession.
  context.subscriptions.push(vscode.commands.registerCommand('vtcodeTestAgent.nextTurn', async () => {
    const ext = vscode.extensions.getExtension('vtcode.vtcode-ls');
    const api = ext.isActive ? ext.exports : await ext.activate();
    if (!last) throw new Error('the test agent has no session yet');
    try {
      const r = await api.prepareRequest({ sessionId: last, messages: [{ role: 'user', content: 'Go on.' }], systemPrompt: 'You are a coding agent.' });
      vscode.window.showInformationMessage(`Test agent: next turn in session ${last}: ${r.messages.length} messages · gauge ${r.stats.display.text}`);
    } catch (e) {
      vscode.window.showErrorMessage(`Test agent: next turn in session ${last} failed: ${e.message}`);
    }
    return last;
  }));
}

function deactivate() {}
module.exports = { activate, deactivate };
