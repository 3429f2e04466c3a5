-- vtcode.ask: ask mode (agent.harness.auto_compaction_mode = "ask", rpc/doc.go). The server
-- proposes a compaction with vtcode/compactionProposed; the plugin shows it as a message naming
-- the three answers: :VtCompact! reviews the preview (:w applies it as edited), :VtCompact
-- compacts now, :VtDecline says not now. Pure helpers.
local M = {}

--- The message of a proposal.
---@param p table {sessionId, usedTokens, threshold, limit}
---@return string
function M.message(p)
  local fmt = require("vtcode.format")
  return string.format("vtcode: session %s holds %s of %s tokens. Compact it? :VtCompact! to review, :VtCompact to compact now, "
    .. ":VtDecline for not now. Until you answer, requests go on with clearing only; at %s it compacts anyway.",
    tostring(p.sessionId), fmt.tokens(p.usedTokens), fmt.tokens(p.limit), fmt.tokens(p.limit))
end

return M
