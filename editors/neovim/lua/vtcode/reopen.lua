-- vtcode.reopen: the sessions this client has open, reopened when the connection to vtcode-ls
-- starts again (the shared daemon died and the plugin restarted the client: the new daemon has
-- nothing open, and every request naming one of them would get -32001). The same rule as the
-- VS Code extension's src/reopen.ts.
--
-- wrap() puts a layer over the client that agents and the plugin send through: it records what
-- vtcode/openSession and vtcode/closeSession did, and while reopen() runs it holds every other
-- request back (sent, in order, once the sessions are open again; such a request returns true
-- and no request id).
local M = {}

local open = {} -- sessionId -> the route its openSession carried
local order = {} -- session ids in the order first opened
local held = nil -- requests waiting for the reopen in progress (functions), or nil

local route_fields = { "workspace", "provider", "model", "contextWindow" }

local function record(method, params, result)
  if method == "vtcode/openSession" and type(result) == "table" and type(result.sessionId) == "string" then
    local id = result.sessionId
    local route = {}
    local any = false
    for _, k in ipairs(route_fields) do
      if type(params) == "table" and params[k] ~= nil and params[k] ~= vim.NIL then
        route[k] = params[k]
        any = true
      end
    end
    if open[id] == nil then
      table.insert(order, id)
      open[id] = route
    elseif any then
      open[id] = route -- a route given to an open session replaces its route (rpc/doc.go)
    end
  elseif method == "vtcode/closeSession" and type(params) == "table" and type(params.sessionId) == "string" then
    local id = params.sessionId
    if open[id] ~= nil then
      open[id] = nil
      for i, v in ipairs(order) do
        if v == id then
          table.remove(order, i)
          break
        end
      end
    end
  end
end

--- The recorded session ids, in the order first opened.
function M.ids()
  return vim.deepcopy(order)
end

--- Forgets every record (for tests).
function M.reset()
  open, order, held = {}, {}, nil
end

-- refused tells an answer of the daemon (it refuses the session: its store gone, another process
-- owns it) from the connection failing under the request (-32099..-32096, or no code).
local function refused(err)
  return type(err) == "table" and type(err.code) == "number" and not (err.code >= -32099 and err.code <= -32096)
end

--- Wraps a client (see vtcode.delta's wrap, which this goes over): requests are recorded, and
--- held back while a reopen runs. call(c, name, ...) calls a client function in either style.
function M.wrap(c, call)
  return require("vtcode.delta").layer(c, function(args, n)
    local method, params, handler = args[1], args[2], args[3]
    if type(handler) == "function" then
      args[3] = function(err, result, ...)
        if not err then
          record(method, params, result)
        end
        return handler(err, result, ...)
      end
    end
    if held then
      table.insert(held, function()
        local ok = call(c, "request", unpack(args, 1, n))
        if not ok and type(handler) == "function" then
          handler({ code = -32096, message = "vtcode: the connection to vtcode-ls is not running" }, nil)
        end
      end)
      return true, nil
    end
    return call(c, "request", unpack(args, 1, n))
  end)
end

--- Reopens every recorded session with vtcode/openSession (the same sessionId and route), one
--- after the other, over send(method, params, cb) (the new connection, not held back), holding
--- the requests sent through wrap() until done. Then calls done({ reopened = ids, failed =
--- { {sessionId, err} }, lost = ids }) and sends the held requests. A session the daemon refuses
--- is dropped from the record (failed); one whose request the connection lost is kept (lost).
function M.reopen(send, done)
  held = held or {}
  local mine_held = held
  local ids = vim.deepcopy(order)
  local result = { reopened = {}, failed = {}, lost = {} }
  local function finish()
    if held == mine_held then
      held = nil
    end
    done(result)
    for _, f in ipairs(mine_held) do
      f()
    end
  end
  local function step(i)
    local id = ids[i]
    if id == nil then
      return finish()
    end
    local params = vim.tbl_extend("force", vim.deepcopy(open[id] or {}), { sessionId = id })
    local ok = send("vtcode/openSession", params, function(err, r)
      if err then
        if refused(err) then
          record("vtcode/closeSession", { sessionId = id })
          table.insert(result.failed, { sessionId = id, err = err })
        else
          table.insert(result.lost, id)
        end
      else
        table.insert(result.reopened, type(r) == "table" and r.sessionId or id)
      end
      step(i + 1)
    end)
    if not ok then
      table.insert(result.lost, id)
      step(i + 1)
    end
  end
  step(1)
end

return M
