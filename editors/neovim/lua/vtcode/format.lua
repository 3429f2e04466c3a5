-- Pure helpers of the vtcode plugin: number formatting, the statusline text, stats text and the
-- :VtPolicy argument parser. No editor state; unit-tested by test/spec.lua.
local M = {}

local function trim_zero(s)
  return (s:gsub("%.0$", ""))
end

local function round(x)
  return math.floor(x + 0.5)
end

--- Formats a token count compactly: 950, 9.5k, 78.1k, 128k, 1.2M.
---@param n number
---@return string
function M.tokens(n)
  if type(n) ~= "number" or n ~= n or n < 0 then
    return "0"
  end
  n = round(n)
  if n < 1000 then
    return tostring(n)
  end
  if n < 100000 then
    return trim_zero(string.format("%.1f", round(n / 100) / 10)) .. "k"
  end
  if n < 1000000 then
    local k = round(n / 1000)
    if k < 1000 then
      return tostring(k) .. "k"
    end
  end
  return trim_zero(string.format("%.1f", round(n / 100000) / 10)) .. "M"
end

--- Formats a pressure ratio (0.62) as "62%".
---@param p number
---@return string
function M.percent(p)
  if type(p) ~= "number" or p ~= p or p < 0 then
    return "0%"
  end
  return tostring(round(p * 100)) .. "%"
end

--- The statusline text for a pressure table (vtcode/tokenPressure or stats, with the daemon's
--- display {percent, used, window, text}): "ctx 62%", "ctx 78.1k" (the used tokens) when the
--- capacity is unknown, "" without pressure.
---@param p table|nil
---@param prefix string|nil default "ctx"
---@return string
function M.statusline(p, prefix)
  if type(p) ~= "table" or type(p.display) ~= "table" then
    return ""
  end
  prefix = prefix or "ctx"
  local d = p.display
  if type(d.percent) == "string" and d.percent ~= "" then
    return prefix .. " " .. d.percent
  end
  return prefix .. " " .. tostring(d.used or "")
end

--- The daemon's gauge text of a stats, pressure or context-map table ("62% · 78.1k/128k").
---@param p table
---@return string
function M.gauge(p)
  return type(p.display) == "table" and tostring(p.display.text or "") or ""
end

local function int(n)
  if type(n) ~= "number" then
    return "-"
  end
  local s = tostring(round(n))
  local sign, digits = s:match("^(-?)(%d+)$")
  if not digits then
    return s
  end
  local out = digits:reverse():gsub("(%d%d%d)", "%1,"):reverse()
  return sign .. out:gsub("^,", "")
end
M.int = int

--- One-line summary of projection stats.
---@param s table stats (docs/design.md §9)
---@return string
function M.stats_summary(s)
  local tok = M.gauge(s) .. " tokens"
  return string.format(
    "Session %s · %s · %d of %d messages sent · %d tool results cleared · %d compaction%s · state %s",
    tostring(s.sessionId), tok, s.projectedMessages or 0, s.messages or 0, s.clearedResults or 0,
    s.compactions or 0, (s.compactions == 1) and "" or "s", tostring(s.state)
  )
end

--- The predicted prompt-cache reuse of a request (stats.reuse): the share of its tokens the cache
--- serves, what clearing holds back for the cache, and the last reported read against the
--- prediction.
---@param r table stats.reuse
---@return string
function M.cache_reuse(r)
  if r.cacheCold then
    local ttl = type(r.pricing) == "table" and tonumber(r.pricing.ttlSeconds) or 0
    return string.format("cold (expired after %d min): %s tokens written", math.floor(ttl / 60 + 0.5), int(r.requestTokens))
  end
  local out = string.format("%s · %s of %s tokens", M.percent(r.ratio), M.tokens(r.reusedTokens), M.tokens(r.requestTokens))
  if (tonumber(r.heldTokens) or 0) > 0 then
    out = out .. " · " .. M.tokens(r.heldTokens) .. " held for the cache"
  end
  local last = r.lastResponse
  if type(last) == "table" then
    out = out .. string.format(" · last read %s (predicted %s)", M.tokens(last.cacheReadTokens), M.tokens(last.predictedReadTokens))
  end
  return out
end

--- Every stats field as aligned lines.
---@param s table stats (docs/design.md §9)
---@return string[]
function M.stats_lines(s)
  local rows = {
    { "session", tostring(s.sessionId) },
    { "messages (history / sent)", int(s.messages) .. " / " .. int(s.projectedMessages) },
    { "tokens (history / sent)", int(s.originalTokens) .. " / " .. int(s.projectedTokens) },
    { "prefix tokens", int(s.prefixTokens) },
    { "capacity", (s.capacity or 0) > 0 and int(s.capacity) or "unknown" },
    { "reserved output", int(s.reservedOutput) },
    { "compaction threshold", int(s.compactionThreshold) },
    { "pressure", M.percent(s.pressure) .. " (" .. tostring(s.state) .. ")" },
    { "tool results cleared", int(s.clearedResults) },
    { "protected results / batches", int(s.protectedResults) .. " / " .. int(s.protectedBatches) },
    { "cleared inputs", int(s.clearedInputs) },
    { "clearing trigger", int(s.localTrigger) },
    { "history budget", int(s.historyBudget) },
    { "strategy", tostring(s.strategy or "-") },
    { "compactions", int(s.compactions) },
  }
  if type(s.lastReportedInputTokens) == "number" then
    table.insert(rows, { "last reported input", int(s.lastReportedInputTokens) })
  end
  local c = s.lastCompaction
  if type(c) == "table" then
    table.insert(rows, {
      "last compaction",
      string.format("%s, %s/%s, %d -> %d messages, artifact %s", tostring(c.trigger), tostring(c.mode),
        tostring(c.strategy), c.originalMessageCount or 0, c.compactedMessageCount or 0, tostring(c.artifactId)),
    })
  end
  if type(s.cache) == "table" then
    table.insert(rows, { "prompt cache hit rate", M.percent(s.cache.lastHitRate) })
  end
  if type(s.reuse) == "table" then
    table.insert(rows, { "cache reuse (next request)", M.cache_reuse(s.reuse) })
  end
  if type(s.receipt) == "table" then
    vim.list_extend(rows, require("vtcode.receipt").rows(s.receipt))
  end
  local w = 0
  for _, r in ipairs(rows) do
    w = math.max(w, #r[1])
  end
  local lines = {}
  for _, r in ipairs(rows) do
    table.insert(lines, r[1] .. string.rep(" ", w - #r[1] + 2) .. r[2])
  end
  return lines
end

local function camel(seg)
  return (seg:gsub("_(%w)", function(c)
    return c:upper()
  end))
end

local function value(v)
  if v == "true" then
    return true
  elseif v == "false" then
    return false
  end
  local q = v:match('^"(.*)"$') or v:match("^'(.*)'$")
  if q then
    return q
  end
  local n = tonumber(v)
  if n ~= nil and v:match("^[-+]?[%d.]+[eE]?[-+]?%d*$") then
    return n
  end
  return v
end

--- Parses :VtPolicy arguments ("toolResultClearing.keepToolUses=3 context.tokenizer=approx") into
--- the nested partial policy of vtcode/setPolicy. snake_case segments become camelCase; true/false
--- become booleans, numbers numbers, quoted text strings.
---@param args string[]
---@return table|nil policy, string|nil error
function M.parse_policy(args)
  local policy = {}
  local any = false
  for _, arg in ipairs(args) do
    local key, v = arg:match("^([%w_.]+)=(.*)$")
    if not key or key:match("^%.") or key:match("%.$") or key:match("%.%.") then
      return nil, "expected key=value, e.g. toolResultClearing.keepToolUses=3, got: " .. arg
    end
    local node = policy
    local segs = vim.split(key, ".", { plain = true })
    for i, seg in ipairs(segs) do
      seg = camel(seg)
      if i == #segs then
        node[seg] = value(v)
      else
        if node[seg] == nil then
          node[seg] = {}
        elseif type(node[seg]) ~= "table" then
          return nil, "conflicting keys at " .. key
        end
        node = node[seg]
      end
    end
    any = true
  end
  if not any then
    return nil, "no key=value given"
  end
  return policy
end

--- A readable rendering of a (nested) policy: "a.b = 1" lines, sorted.
---@param t table
---@return string[]
function M.policy_lines(t)
  local lines = {}
  local function walk(node, prefix)
    local keys = vim.tbl_keys(node)
    table.sort(keys)
    for _, k in ipairs(keys) do
      local v = node[k]
      local path = prefix == "" and k or (prefix .. "." .. k)
      if type(v) == "table" then
        walk(v, path)
      else
        table.insert(lines, path .. " = " .. vim.inspect(v))
      end
    end
  end
  walk(t, "")
  return lines
end

return M
