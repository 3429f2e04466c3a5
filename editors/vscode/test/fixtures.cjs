// A synthetic agent session for the tests: user turns with batches of large read_file results
// (about 2k tokens each) and a closing assistant message. 40 messages by default.

/** toolOutput returns about `lines` lines of Go-like source, distinct per batch. */
function toolOutput(batch, lines = 60) {
  const out = [];
  for (let j = 0; j < lines; j++) {
    out.push(`${String(j + 1).padStart(4)}  func handler${batch}_${j}(ctx context.Context, req *Request${j % 7}) (*Response, error) { return svc${batch}.Do(ctx, req, ${j * 17 % 101}) }`);
  }
  return out.join('\n');
}

/**
 * agentSession returns the messages of a session: a goal, then `batches` read_file batches, with a
 * follow-up user turn after every `turnEvery` batches, and a closing assistant message.
 * The default is 40 messages in 3 user turns.
 */
function agentSession(batches = 18, tag = 's', turnEvery = 6) {
  const msgs = [{ role: 'user', content: `Fix the failing test TestHandler in pkg/server (${tag}). Do not change the public API.` }];
  for (let i = 0; i < batches; i++) {
    if (i > 0 && i % turnEvery === 0) msgs.push({ role: 'user', content: `Keep going: check file_${i}.go next (${tag}).` });
    const id = `call_${tag}_${i}`;
    msgs.push({
      role: 'assistant',
      content: `Reading file ${i} to find the handler.`,
      toolCalls: [{ id, name: 'read_file', arguments: JSON.stringify({ path: `pkg/server/file_${i}.go` }) }],
    });
    msgs.push({ role: 'tool', toolCallId: id, toolName: 'read_file', content: toolOutput(i) });
  }
  msgs.push({ role: 'assistant', content: 'Ran `go test ./pkg/server` (exit code 1): TestHandler still fails; next: inspect file_3.go.' });
  return msgs;
}

module.exports = { agentSession, toolOutput };
