-- vtcode.receipt: the session's receipt (rpc/doc.go, stats.receipt and contextMap.receipt) as
-- text: what the provider billed, from its own usage of every answer, beside the estimate of the
-- same requests without vtcode-ls, each compaction with the summarizer calls it committed, and the
-- unused summarizer calls. Pure helpers; shown by :VtStats and :VtContext.
local M = {}

local function int(n)
  return require("vtcode.format").int(n)
end

--- Formats a cost in US dollars: cents, or 4 decimals under a cent; "-" when unknown.
---@param v number|nil
---@return string
function M.dollars(v)
  if type(v) ~= "number" or v ~= v then
    return "-"
  end
  local a = math.abs(v)
  local s = (a > 0 and a < 0.01) and string.format("%.4f", a) or string.format("%.2f", a)
  return (v < 0 and "-" or "") .. "$" .. s
end

--- The non-zero token kinds of a bill.
---@param t table {input, cacheRead, cacheWrite5m, cacheWrite1h, output, reasoning?}
---@return string
function M.tokens(t)
  t = t or {}
  local parts = { int(t.input or 0) .. " in" }
  if (t.cacheRead or 0) > 0 then
    table.insert(parts, int(t.cacheRead) .. " cache read")
  end
  local w = (t.cacheWrite5m or 0) + (t.cacheWrite1h or 0)
  if w > 0 then
    table.insert(parts, int(w) .. " cache write" .. ((t.cacheWrite1h or 0) > 0 and (" (" .. int(t.cacheWrite1h) .. " 1h)") or ""))
  end
  local out = int(t.output or 0) .. " out"
  if (t.reasoning or 0) > 0 then
    out = out .. " (" .. int(t.reasoning) .. " reasoning)"
  end
  table.insert(parts, out)
  return table.concat(parts, " · ")
end

--- One line: requests, paid, the estimate without vtcode-ls and the difference; tokens alone
--- when a model has no known list price (never a made-up cost).
---@param r table receipt
---@return string
function M.summary(r)
  local req = int(r.requests or 0) .. ((r.requests == 1) and " request" or " requests")
  if type(r.paidUsd) ~= "number" then
    return req .. " · " .. M.tokens(r.tokens) .. " · no list price for " .. table.concat(r.unpriced or { "the model" }, ", ")
  end
  local saved = r.savedUsd or 0
  return string.format("%s · paid %s · without vtcode-ls ≈ %s (estimate) · %s", req, M.dollars(r.paidUsd),
    M.dollars(r.withoutUsd), saved >= 0 and ("saved " .. M.dollars(saved)) or ("cost " .. M.dollars(-saved) .. " more"))
end

local function plural(n, word)
  return int(n) .. " " .. word .. (n == 1 and "" or "s")
end

--- A bill of summarizer calls: "2 calls · 34,000 in · 1,000 out · $0.12", or "1 call · …" when
--- calls is 1; no count when calls is 0 or absent (a compaction of an older log kept only its
--- sum); no cost when usd is absent (a model without a known list price: tokens only).
---@param calls number|nil
---@param tokens table|nil
---@param usd number|nil
---@return string
function M.calls(calls, tokens, usd)
  local parts = {}
  if (calls or 0) > 0 then
    table.insert(parts, plural(calls, "call"))
  end
  table.insert(parts, M.tokens(tokens))
  if type(usd) == "number" then
    table.insert(parts, M.dollars(usd))
  end
  return table.concat(parts, " · ")
end

--- The receipt's unused summarizer calls (previews never applied or replaced, pass-1 notes
--- discarded, failed compactions that answered) as one text, or nil when there are none.
---@param r table receipt
---@return string|nil
function M.unused(r)
  local u = type(r) == "table" and r.unused or nil
  if type(u) ~= "table" or (u.calls or 0) <= 0 then
    return nil
  end
  return M.calls(u.calls, u.tokens, u.usd)
end

--- At most this many compactions are listed one by one (the newest); the total covers them all.
M.MAX_COMPACTION_ROWS = 5

--- The rows {label, value} :VtStats adds for a receipt.
---@param r table receipt
---@return table[]
function M.rows(r)
  local rows = {
    { "requests billed", int(r.requests or 0) },
    { "tokens billed", M.tokens(r.tokens) },
  }
  if type(r.paidUsd) == "number" then
    table.insert(rows, { "paid (list prices" .. (r.pricesAsOf and (" of " .. r.pricesAsOf) or "") .. ")", M.dollars(r.paidUsd) })
    table.insert(rows, { "without vtcode-ls (estimate)", M.dollars(r.withoutUsd) })
    table.insert(rows, { "saved", M.dollars(r.savedUsd) })
  else
    table.insert(rows, { "cost", "no list price for " .. table.concat(r.unpriced or {}, ", ") })
  end
  if (r.tierRequests or 0) > 0 or (r.withoutTierRequests or 0) > 0 then
    table.insert(rows, { "long-context tier", string.format("%d requests (%d without vtcode-ls)", r.tierRequests or 0, r.withoutTierRequests or 0) })
  end
  local cs = r.compactions or {}
  if #cs > 0 then
    local usd, calls = 0, 0
    for _, c in ipairs(cs) do
      usd = usd + (c.usd or 0)
      calls = calls + (c.calls or 0)
    end
    local total = tostring(#cs)
    if calls > 0 then
      total = total .. " · " .. plural(calls, "call")
    end
    table.insert(rows, { "compactions billed", total .. (usd > 0 and (" · " .. M.dollars(usd)) or "") })
    local first = math.max(1, #cs - M.MAX_COMPACTION_ROWS + 1)
    for i = first, #cs do
      local c = cs[i]
      table.insert(rows, {
        string.format("  compaction %d (%s, %s)", i, tostring(c.trigger), tostring(c.mode)),
        string.format("%s -> %s tokens · %s", int(c.originalTokens or 0), int(c.compactedTokens or 0), M.calls(c.calls, c.tokens, c.usd)),
      })
    end
  end
  local unused = M.unused(r)
  if unused then
    table.insert(rows, { "unused summarizer calls", unused })
  end
  return rows
end

return M
