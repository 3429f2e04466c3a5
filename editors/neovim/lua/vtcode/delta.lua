-- Projection deltas (rpc/doc.go, "Projection deltas"). The plugin announces
-- capabilities.experimental.vtcode.projectionDelta; for each session it keeps the last projection
-- the daemon sent, echoes its revision as baseRevision, and rebuilds the whole projection from a
-- delta, so that callers of require("vtcode").client() always receive whole projections while
-- only the change crosses the pipe.
local M = {}

local unpack = table.unpack or unpack

-- sessionId -> { revision = string, messages = list }
local known = {}
M.applied = 0 -- deltas applied (for :checkhealth and tests)

--- Adds the client capability to an LSP capabilities table.
function M.capabilities(caps)
  caps.experimental = caps.experimental or {}
  caps.experimental.vtcode = vim.tbl_extend("force", caps.experimental.vtcode or {}, { projectionDelta = true })
  return caps
end

local function copy(list)
  local out = {}
  for i, v in ipairs(list) do
    out[i] = v
  end
  return out
end

--- prepareRequest params with the session's baseRevision (a copy; the caller's table is kept).
function M.params(params)
  local out = {}
  for k, v in pairs(params) do
    out[k] = v
  end
  out.baseRevision = nil
  local k = type(params.sessionId) == "string" and known[params.sessionId]
  if k then
    out.baseRevision = k.revision
  end
  return out
end

--- Turns a wire result into the whole projection and remembers it. Returns result, or nil and an
--- error message for a delta against a projection this client does not hold (the session is then
--- forgotten, so the next request gets the whole projection).
function M.apply(sid, result)
  if type(result) ~= "table" then
    return result
  end
  local whole
  local d = result.delta
  if type(d) == "table" then
    local k = known[sid]
    local keep = tonumber(d.keep) or -1
    if not k or k.revision ~= d.baseRevision or keep < 0 or keep > #k.messages then
      known[sid] = nil
      return nil, "vtcode: projection delta against " .. tostring(d.baseRevision) .. ", which this client does not hold"
    end
    whole = { unpack(k.messages, 1, keep) }
    for _, m in ipairs(d.messages or {}) do
      whole[#whole + 1] = m
    end
    M.applied = M.applied + 1
  else
    whole = type(result.messages) == "table" and result.messages or {}
  end
  if type(result.revision) == "string" then
    known[sid] = { revision = result.revision, messages = copy(whole) }
  else
    known[sid] = nil
  end
  result.delta = nil
  result.messages = whole
  return result
end

function M.forget(sid)
  known[sid] = nil
end

function M.reset()
  known = {}
end

--- Wraps a vim.lsp client so that vtcode/prepareRequest sent through it carries baseRevision and
--- answers with the whole projection. Every other field and method is the client's own; both
--- call styles work (client.request(...) on 0.7–0.10, client:request(...) on 0.11+).
function M.wrap(c, call)
  return M.layer(c, function(args, n)
    local method, params, handler = args[1], args[2], args[3]
    if method == "vtcode/prepareRequest" and type(params) == "table" and type(handler) == "function" then
      local sid = params.sessionId
      args[2] = M.params(params)
      args[3] = function(err, result, ...)
        if err then
          M.forget(sid)
          return handler(err, result, ...)
        end
        local whole, msg = M.apply(sid, result)
        if msg then
          return handler({ code = -32603, message = msg }, nil, ...)
        end
        return handler(nil, whole, ...)
      end
    end
    return call(c, "request", unpack(args, 1, n))
  end)
end

--- A layer over client c: its request(...) is request(args, n), with args the arguments as a
--- list (n of them, the client itself left out) in either call style; every other field and
--- method is the client's own, callable as c.f(...) or c:f(...).
function M.layer(c, request)
  local w = {}
  local function send(...)
    local args = { ... }
    local n = select("#", ...)
    if args[1] == w then
      table.remove(args, 1)
      n = n - 1
    end
    return request(args, n)
  end
  setmetatable(w, {
    __index = function(_, key)
      if key == "request" then
        return send
      end
      local v = c[key]
      if type(v) == "function" then
        return function(first, ...)
          if first == w then
            return v(c, ...)
          end
          return v(first, ...)
        end
      end
      return v
    end,
  })
  return w
end

return M
