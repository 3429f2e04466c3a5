// Package history is the message model shared by every vtcode-ls package.
//
// A [Message] is one entry of an agent conversation: a system, user, assistant or
// tool message in the provider-neutral shape of the vtcode-ls protocol. Messages
// round-trip through JSON exactly: fields this package does not know, on messages,
// tool calls and content parts, are kept as raw JSON and written back unchanged, and
// opaque provider blocks ([Message.ReasoningDetails]) are never interpreted.
//
// The package also owns the structural vocabulary the engine reasons with:
// batches (an assistant message with tool calls plus the results that answer
// them, see [Pair]), protocol groups (see [Groups]), pairing repair
// ([Normalize]) and token estimates ([Estimator]), which are computed once per
// message and cached on it.
//
// history imports no other package of this module.
package history
