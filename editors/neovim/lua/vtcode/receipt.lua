-- vtcode.receipt: the session's receipt (rpc/doc.go, stats.receipt and contextMap.receipt) as
-- text: what the provider billed, from its own usage of every answer, beside the estimate of the
-- same requests without vtcode-ls. Pure helpers; shown by :VtStats and :VtContext.
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
    local usd = 0
    for _, c in ipairs(cs) do
      usd = usd + (c.usd or 0)
    end
    table.insert(rows, { "compactions billed", tostring(#cs) .. (usd > 0 and (", " .. M.dollars(usd)) or "") })
  end
  return rows
end

return M
