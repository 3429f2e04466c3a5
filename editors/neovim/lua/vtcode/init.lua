-- vtcode: the Neovim client of the vtcode-ls daemon (docs/design.md §14).
--
-- Starts `vtcode-ls` through vim.lsp (vim.lsp.start on 0.8+, vim.lsp.start_client on 0.7),
-- follows the active session (the workspace's most recently updated session unless the user
-- picked one with :VtSession), keeps its token pressure for the statusline, shows work-done
-- progress, and exposes the client so an agent plugin can send its turns. See :help vtcode.
local fmt = require("vtcode.format")
local delta = require("vtcode.delta")
local reopen = require("vtcode.reopen")

local M = {}

local uv = vim.uv or vim.loop -- vim.loop is deprecated since 0.10 (vim.uv)

-- Neovim 0.11 made client functions methods (client:request()); 0.7–0.10 use client.request().
local methods = vim.fn.has("nvim-0.11") == 1
local function call(client, name, ...)
  if methods then
    return client[name](client, ...)
  end
  return client[name](...)
end

local defaults = {
  -- The daemon command. It serves JSON-RPC on stdio with no arguments.
  cmd = { "vtcode-ls" },
  -- The workspace: a path, or a function(bufnr) -> path. Default: the nearest folder upwards
  -- from the current file (or the working directory) holding one of root_markers, else the
  -- working directory.
  root_dir = nil,
  root_markers = { "vtcode.toml", ".vtcode", ".git" },
  -- A partial policy sent as initializationOptions (same shape as :VtPolicy / vtcode/setPolicy).
  init_options = nil,
  -- The proxy for existing coding agents, run by the daemon: { listen = "127.0.0.1:8787" }
  -- (a string is the listen address). nil: off. Sent as initializationOptions.proxy.
  proxy = nil,
  -- Start the client in setup(). When false, the first command starts it.
  autostart = true,
  -- Show work-done progress in the command line and the end message with vim.notify.
  progress = true,
  -- Prefix of statusline(): "ctx 62%".
  statusline_prefix = "ctx",
  -- Called with each vtcode/tokenPressure notification of the active session.
  on_pressure = nil,
  -- Extra vim.lsp client options (e.g. { flags = { debounce_text_changes = 150 } }).
  lsp = {},
}

local state = {
  config = vim.deepcopy(defaults),
  client_id = nil,
  root = nil,
  initialized = false,
  pinned = nil, -- session picked with :VtSession
  current = nil, -- most recently updated session
  pressure = {}, -- sessionId -> last vtcode/tokenPressure (or stats) table
  stats = {}, -- sessionId -> last projectionStats
  progress = {}, -- token -> { title, message, percentage, done }
  progress_log = {}, -- recent progress events { token, kind, title, message, percentage }
  compact_request = nil, -- { client_id, id } of the running :VtCompact
  wrapped = nil, -- { client, wrapper }: the client() wrapper of the running client (vtcode.delta)
  token_seq = 0,
  stopping = false, -- M.stop() asked the client to stop: its exit is not a lost connection
  reconnected_at = nil, -- uv.now() of the last automatic restart
  follow = nil, -- the session followed when the connection was lost, followed again after the reopen
}
M._state = state

-- A lost connection (vtcode-ls exited without being asked, e.g. the shared daemon was killed and
-- the forwarder exited 1) is restarted once, and the user is told once; a second loss within
-- this time is reported and left stopped.
local reconnect_window_ms = 3 * 60 * 1000

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "vtcode" })
end

local function redraw()
  pcall(vim.cmd, "redrawstatus")
end

-- The active session id: the picked one, else the most recently updated one.
function M.active_session()
  return state.pinned or state.current
end

--- The vim.lsp client of the running daemon, or nil. vtcode/prepareRequest sent through it
--- answers with the whole projection while only its change since the session's previous one
--- crosses the wire (projection deltas, see vtcode.delta).
function M.client()
  if not state.client_id then
    return nil
  end
  local c = vim.lsp.get_client_by_id(state.client_id)
  if c == nil or (c.is_stopped and call(c, "is_stopped")) then
    return nil
  end
  if state.wrapped == nil or state.wrapped.client ~= c then
    -- sessions opened through it are reopened after a reconnect (vtcode.reopen)
    state.wrapped = { client = c, wrapper = reopen.wrap(delta.wrap(c, call), call) }
  end
  return state.wrapped.wrapper
end

--- The last pressure of the active session ({sessionId, projectedTokens, originalTokens, capacity,
--- pressure, state}) or nil.
function M.pressure()
  local id = M.active_session()
  return id and state.pressure[id] or nil
end

--- The statusline component: "ctx 62%" ("ctx 78.1k" when the capacity is unknown), or "" when no
--- session is active.
function M.statusline()
  local id = M.active_session()
  if not id then
    return ""
  end
  return fmt.statusline(state.pressure[id], state.config.statusline_prefix)
end

--- Recent progress events (newest last), for statuslines and tests.
function M.progress_messages()
  return state.progress_log
end

local function set_active(fn)
  local before = M.active_session()
  fn()
  local after = M.active_session()
  if before ~= after then
    redraw()
    pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "VtcodeSession", modeline = false })
  end
end

-- ---- progress ------------------------------------------------------------------------------

local function on_progress(params, client_id)
  if client_id ~= state.client_id or type(params) ~= "table" then
    return
  end
  local token, val = params.token, params.value
  if type(val) ~= "table" or not val.kind then
    return
  end
  local p = state.progress[token] or {}
  state.progress[token] = p
  if val.kind == "begin" then
    p.title, p.message, p.percentage, p.done = val.title, val.message, val.percentage, false
  elseif val.kind == "report" then
    p.message = val.message or p.message
    p.percentage = val.percentage or p.percentage
  elseif val.kind == "end" then
    p.message, p.done = val.message, true
  end
  table.insert(state.progress_log, {
    token = token,
    kind = val.kind,
    title = val.title or p.title,
    message = val.message,
    percentage = val.percentage,
  })
  while #state.progress_log > 50 do
    table.remove(state.progress_log, 1)
  end
  if state.config.progress then
    if val.kind == "end" then
      vim.api.nvim_echo({ { "" } }, false, {})
      if val.message and val.message ~= "" then
        local failed = val.message:match("^Compaction failed")
        notify(val.message, failed and vim.log.levels.WARN or vim.log.levels.INFO)
      end
    else
      local text = "vtcode: " .. (p.title or "")
      if p.message and p.message ~= "" then
        text = text .. " " .. p.message
      end
      if p.percentage then
        text = text .. string.format(" (%d%%)", p.percentage)
      end
      vim.api.nvim_echo({ { text, "ModeMsg" } }, false, {})
    end
  end
  if val.kind == "end" then
    state.progress[token] = nil
  end
  redraw()
end

local have_lsp_progress = vim.fn.exists("##LspProgress") == 1

-- ---- handlers ------------------------------------------------------------------------------

local stats_for -- forward

local handlers = {}

handlers["vtcode/tokenPressure"] = function(_, p, ctx)
  if type(p) ~= "table" or not p.sessionId then
    return
  end
  if ctx and ctx.client_id ~= state.client_id then
    return
  end
  state.pressure[p.sessionId] = p
  set_active(function()
    state.current = p.sessionId
  end)
  if p.sessionId == M.active_session() then
    redraw()
    if state.config.on_pressure then
      pcall(state.config.on_pressure, p)
    end
  end
  pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "VtcodePressure", modeline = false })
  if package.loaded["vtcode.context"] then -- an open :VtContext window follows its session
    require("vtcode.context").refresh(p.sessionId)
  end
end

handlers["vtcode/compactBoundary"] = function(_, b, ctx)
  if ctx and ctx.client_id ~= state.client_id then
    return
  end
  state.last_boundary = b
  pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "VtcodeCompactBoundary", modeline = false })
end

handlers["vtcode/compactionProposed"] = function(_, p, ctx)
  if type(p) ~= "table" or (ctx and ctx.client_id ~= state.client_id) then
    return
  end
  state.proposal = p
  notify(require("vtcode.ask").message(p), vim.log.levels.WARN)
end

if not have_lsp_progress then
  -- Neovim 0.7–0.9: wrap the built-in $/progress handler (it keeps client.messages.progress and
  -- fires User LspProgressUpdate) and record the events for this client.
  handlers["$/progress"] = function(err, result, ctx, config)
    local default = vim.lsp.handlers["$/progress"]
    local ret
    if default then
      ret = default(err, result, ctx, config)
    end
    on_progress(result, ctx.client_id)
    return ret
  end
end

-- ---- starting ------------------------------------------------------------------------------

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

local function find_root(bufnr)
  local cfg = state.config
  if type(cfg.root_dir) == "function" then
    return cfg.root_dir(bufnr)
  elseif type(cfg.root_dir) == "string" then
    local dir = vim.fn.fnamemodify(cfg.root_dir, ":p"):gsub("/$", "")
    return dir
  end
  local name = vim.api.nvim_buf_get_name(bufnr or 0)
  local dir = (name ~= "" and vim.fn.fnamemodify(name, ":p:h")) or vim.fn.getcwd()
  if not exists(dir) then
    dir = vim.fn.getcwd()
  end
  while dir and dir ~= "" do
    for _, m in ipairs(cfg.root_markers or {}) do
      if exists(dir .. "/" .. m) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      break
    end
    dir = parent
  end
  return vim.fn.getcwd()
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  return delta.capabilities(caps)
end

-- Empty Lua tables encode as JSON arrays; params must be objects.
local function obj(t)
  if t == nil or next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

local function request(method, params, cb)
  params = obj(params)
  local client = M.client()
  if not client then
    local ok = M.start()
    client = ok and M.client() or nil
  end
  if not client then
    notify("vtcode-ls is not running; see :checkhealth vtcode", vim.log.levels.ERROR)
    return nil
  end
  local ok, id = call(client, "request", method, params, function(err, result)
    cb(err, result)
  end, 0)
  if not ok then
    notify("vtcode: could not send " .. method, vim.log.levels.ERROR)
    return nil
  end
  return id
end
M.request = request

local function pick_initial_session()
  if M.active_session() then
    return
  end
  request("vtcode/listSessions", {}, function(err, list)
    if err or type(list) ~= "table" or M.active_session() then
      return
    end
    local best -- the daemon marks the session to follow (vtcode/listSessions active)
    for _, s in ipairs(list) do
      if s.active == true then
        best = s
      end
    end
    if best then
      set_active(function()
        state.current = best.sessionId
      end)
      stats_for(best.sessionId)
    end
  end)
end

-- reopen_sessions reopens, on a client that (re)started, the sessions opened through the previous
-- ones (the shared daemon died: the new one has none open) before any other request goes out, and
-- follows again the session the statusline showed. The reconnect itself was told once
-- (M._reconnect); only sessions the daemon refuses to reopen add a message.
local function reopen_sessions(client)
  local follow = state.follow
  state.follow = nil
  if #reopen.ids() == 0 and follow == nil then
    return
  end
  reopen.reopen(function(method, params, cb)
    return call(client, "request", method, params, cb, 0)
  end, function(r)
    local refused = {}
    for _, f in ipairs(r.failed) do
      table.insert(refused, f.sessionId)
      state.pressure[f.sessionId] = nil
      if state.pinned == f.sessionId then
        state.pinned = nil
      end
      if follow == f.sessionId then
        follow = nil
      end
    end
    if #refused > 0 then
      local e = r.failed[1].err
      notify("vtcode: " .. (#refused == 1 and "session " or "sessions ") .. table.concat(refused, ", ")
        .. " could not be reopened after the reconnect: " .. tostring(type(e) == "table" and e.message or e), vim.log.levels.WARN)
    end
    if #r.lost > 0 then
      state.follow = state.follow or follow -- the next connection reopens and follows them
      return
    end
    if follow and state.current == nil then
      set_active(function()
        state.current = follow
      end)
    end
    local id = M.active_session()
    if id then
      stats_for(id)
    end
  end)
end

-- init_options returns the initializationOptions: the partial policy, with the proxy settings
-- under "proxy".
local function init_options(cfg)
  local px = cfg.proxy
  if type(px) == "string" then
    px = { listen = px }
  end
  if type(px) ~= "table" or px.listen == nil or px.listen == "" then
    return cfg.init_options
  end
  local out = vim.deepcopy(cfg.init_options or {})
  out.proxy = { listen = px.listen, allowRemote = px.allow_remote, secretEnv = px.secret_env }
  return out
end
M._init_options = init_options -- for tests

--- Starts (or reuses) the client for the workspace of the current buffer. Returns true when a
--- client is running or starting.
function M.start(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if M.client() then
    return true
  end
  local cfg = state.config
  local cmd = cfg.cmd
  if type(cmd) == "string" then
    cmd = { cmd }
  end
  if vim.fn.executable(cmd[1]) ~= 1 then
    notify("vtcode: " .. tostring(cmd[1]) .. " is not executable; set cmd in require('vtcode').setup()", vim.log.levels.ERROR)
    return false
  end
  local root = find_root(bufnr)
  state.root = root
  state.initialized = false
  local lsp_config = vim.tbl_deep_extend("force", cfg.lsp or {}, {
    name = "vtcode",
    cmd = cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } },
    init_options = init_options(cfg),
    capabilities = capabilities(),
    handlers = handlers,
    on_init = function(client, result)
      state.initialized = true
      state.server_info = (type(result) == "table" and result.serverInfo) or client.server_info
      reopen_sessions(client)
      vim.schedule(pick_initial_session)
    end,
    on_exit = function(code, signal, client_id)
      if client_id == state.client_id then
        delta.reset()
        state.wrapped = nil
        state.client_id = nil
        state.initialized = false
        local lost = not state.stopping and (code ~= 0 or (signal ~= 0 and signal ~= 15)) -- 15: Neovim ending it
        if lost then
          state.follow = state.follow or state.current
        end
        state.current = nil
        state.pressure = {}
        state.progress = {}
        state.stopping = false
        vim.schedule(function()
          redraw()
          if lost then
            M._reconnect(bufnr, code, signal)
          end
        end)
      end
    end,
  })
  local id
  if vim.lsp.start then
    id = vim.lsp.start(lsp_config, { bufnr = bufnr })
  else
    id = vim.lsp.start_client(lsp_config)
    if id then
      vim.lsp.buf_attach_client(bufnr, id)
    end
  end
  if not id then
    notify("vtcode: could not start " .. table.concat(cmd, " "), vim.log.levels.ERROR)
    return false
  end
  state.client_id = id
  return true
end

--- Restarts the client after its connection was lost (see reconnect_window_ms).
function M._reconnect(bufnr, code, signal)
  local why = string.format("exit code %s%s", tostring(code), (signal or 0) ~= 0 and (", signal " .. tostring(signal)) or "")
  local now = uv.now()
  if state.reconnected_at and now - state.reconnected_at < reconnect_window_ms then
    notify("vtcode: the connection to vtcode-ls was lost again (" .. why .. "); not restarting it. See :LspLog, then :lua require('vtcode').start()", vim.log.levels.ERROR)
    return
  end
  state.reconnected_at = now
  if not vim.api.nvim_buf_is_valid(bufnr) then
    bufnr = vim.api.nvim_get_current_buf()
  end
  if M.start(bufnr) then
    notify("vtcode: the connection to vtcode-ls was lost (" .. why .. "; the shared daemon stopped?); reconnected, the sessions resume", vim.log.levels.WARN)
  end
end

--- Stops the client.
function M.stop()
  local c = M.client()
  if c then
    state.stopping = true
    call(c, "stop")
  end
end

--- Configures the plugin and (unless autostart = false) starts the client. See :help vtcode-setup.
function M.setup(opts)
  state.config = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts or {})
  if opts and opts.cmd then
    state.config.cmd = opts.cmd -- lists are replaced, not merged
  end
  state.setup_done = true
  if have_lsp_progress and not state.progress_autocmd then
    state.progress_autocmd = vim.api.nvim_create_autocmd("LspProgress", {
      group = vim.api.nvim_create_augroup("vtcode_progress", { clear = true }),
      callback = function(ev)
        local data = ev.data or {}
        on_progress(data.params or data.result, data.client_id)
      end,
    })
  end
  if state.config.autostart then
    M.start()
  end
end

local function ensure_setup()
  if not state.setup_done then
    M.setup({})
  end
end

local function require_session()
  local id = M.active_session()
  if not id then
    notify("vtcode: no active session. An agent opens one through require('vtcode').client(); pick a stored one with :VtSession", vim.log.levels.WARN)
  end
  return id
end

local function error_text(what, err)
  local msg = type(err) == "table" and (err.message or vim.inspect(err)) or tostring(err)
  local data = type(err) == "table" and err.data or nil
  if type(data) == "table" and type(data.rootCause) == "string" and data.rootCause ~= "" and not msg:find(data.rootCause, 1, true) then
    msg = msg .. " (" .. data.rootCause .. ")"
  end
  msg = msg:gsub("%s+", " ")
  if #msg > 1024 then
    msg = msg:sub(1, 1021) .. "..."
  end
  return what .. ": " .. msg
end

-- stats_for fetches projection stats of a session (opening a stored session once when the daemon
-- has not loaded it) and calls cb(err, stats).
stats_for = function(id, cb)
  cb = cb or function() end
  request("vtcode/projectionStats", { sessionId = id }, function(err, stats)
    if err and err.code == -32001 then
      request("vtcode/openSession", { sessionId = id }, function(err2)
        if err2 then
          return cb(err2)
        end
        request("vtcode/projectionStats", { sessionId = id }, function(err3, stats3)
          if not err3 then
            state.stats[id] = stats3
            state.pressure[id] = stats3
            redraw()
          end
          cb(err3, stats3)
        end)
      end)
      return
    end
    if not err and type(stats) == "table" then
      state.stats[id] = stats
      state.pressure[id] = stats
      redraw()
    end
    cb(err, stats)
  end)
end

-- ---- commands ------------------------------------------------------------------------------

--- :VtCompact [instructions] — compacts the active session; cb(err, result) is optional.
function M.compact(instructions, cb)
  ensure_setup()
  local id = require_session()
  if not id then
    return
  end
  state.token_seq = state.token_seq + 1
  local token = string.format("vtcode-compact-%d-%d", vim.fn.getpid(), state.token_seq)
  local params = { sessionId = id, workDoneToken = token }
  if instructions and instructions ~= "" then
    params.instructions = instructions
  end
  local rid
  rid = request("vtcode/compact", params, function(err, result)
    if state.compact_request and state.compact_request.id == rid then
      state.compact_request = nil
    end
    if err then
      if err.code == -32800 then
        notify("vtcode: compaction cancelled; the history is unchanged")
      else
        notify(error_text("vtcode: compaction failed", err), vim.log.levels.ERROR)
      end
    else
      -- "Conversation is already compact." is a result with mode "none", not an error
      if result and result.mode ~= "none" then
        state.last_compaction = result
      end
      -- with progress shown, the progress end message already said how it went
      if not state.config.progress and result and result.message then
        notify(result.message)
      end
      stats_for(id)
    end
    if cb then
      cb(err, result)
    end
  end)
  if rid then
    state.compact_request = { client_id = state.client_id, id = rid }
  end
  return rid
end

--- Cancels the running :VtCompact, if any.
function M.cancel()
  local r = state.compact_request
  local c = M.client()
  if r and c then
    call(c, "cancel_request", r.id)
    return true
  end
  return false
end

--- :VtDecline — "not now" to the last compaction proposal (ask mode); cb(err, stats) is optional.
function M.decline(cb)
  ensure_setup()
  local id = (state.proposal and state.proposal.sessionId) or require_session()
  if not id then
    return
  end
  request("vtcode/declineCompaction", { sessionId = id }, function(err, s)
    if err then
      notify(error_text("vtcode: decline failed", err), vim.log.levels.ERROR)
    else
      state.proposal = nil
      notify("vtcode: not now; session " .. id .. " goes on with clearing only and compacts at the window's limit")
    end
    if cb then
      cb(err, s)
    end
  end)
end

--- :VtStats — shows the projection stats of the active session; cb(err, stats) is optional.
function M.stats(cb)
  ensure_setup()
  local id = require_session()
  if not id then
    return
  end
  stats_for(id, function(err, s)
    if err then
      notify(error_text("vtcode: stats failed", err), vim.log.levels.ERROR)
    else
      notify(fmt.stats_summary(s) .. "\n" .. table.concat(fmt.stats_lines(s), "\n"))
    end
    if cb then
      cb(err, s)
    end
  end)
end

--- :VtPolicy key=value… — sets policy keys (the active session's, or the workspace default with
--- :VtPolicy! or when no session is active); without arguments shows the effective policy.
function M.policy(args, workspace_default, cb)
  ensure_setup()
  local id = (not workspace_default) and M.active_session() or nil
  local scope = id and ("session " .. id) or "workspace default"
  if not args or #args == 0 then
    request("vtcode/getPolicy", { sessionId = id }, function(err, p)
      if err then
        notify(error_text("vtcode: policy", err), vim.log.levels.ERROR)
      else
        notify("vtcode policy (" .. scope .. "):\n" .. table.concat(fmt.policy_lines(p or {}), "\n"))
      end
      if cb then
        cb(err, p)
      end
    end)
    return
  end
  local patch, perr = fmt.parse_policy(args)
  if not patch then
    notify("vtcode: " .. perr, vim.log.levels.ERROR)
    if cb then
      cb({ message = perr })
    end
    return
  end
  request("vtcode/setPolicy", { sessionId = id, policy = patch }, function(err, p)
    if err then
      notify(error_text("vtcode: policy rejected", err), vim.log.levels.ERROR)
    else
      notify("vtcode policy (" .. scope .. ") set: " .. table.concat(fmt.policy_lines(patch), ", "))
    end
    if cb then
      cb(err, p)
    end
  end)
end

local function relative(iso)
  local s = tostring(iso or ""):gsub("T", " "):gsub("%.%d+", ""):gsub("Z$", " UTC")
  return s
end

--- :VtRestore [artifactId] — restores the history saved before a compaction (vim.ui.select).
function M.restore(artifact_id, cb)
  ensure_setup()
  local id = require_session()
  if not id then
    return
  end
  local function run(aid)
    request("vtcode/restore", { sessionId = id, artifactId = aid }, function(err, r)
      if err then
        notify(error_text("vtcode: restore failed", err), vim.log.levels.ERROR)
      else
        notify(string.format("vtcode: history restored (%d messages)", r and r.messages or 0))
        stats_for(id)
      end
      if cb then
        cb(err, r)
      end
    end)
  end
  if artifact_id and artifact_id ~= "" then
    return run(artifact_id)
  end
  request("vtcode/listArtifacts", { sessionId = id }, function(err, list)
    if err then
      return notify(error_text("vtcode: artifacts", err), vim.log.levels.ERROR)
    end
    if type(list) ~= "table" or #list == 0 then
      return notify("vtcode: session " .. id .. " has no compaction artifacts to restore")
    end
    table.sort(list, function(a, b)
      return tostring(a.createdAt) > tostring(b.createdAt)
    end)
    vim.ui.select(list, {
      prompt = "Restore history of " .. id .. " from:",
      format_item = function(a)
        return string.format("%s  %d messages · %s compaction (%s)  %s", relative(a.createdAt), a.messages or 0,
          tostring(a.trigger), tostring(a.mode ~= "" and a.mode or "-"), tostring(a.artifactId))
      end,
    }, function(choice)
      if choice then
        run(choice.artifactId)
      end
    end)
  end)
end

--- :VtSession [id|auto] — picks the active session (vim.ui.select), or follows the most recent.
function M.session(session_id, cb)
  ensure_setup()
  local function pin(sid)
    request("vtcode/openSession", { sessionId = sid }, function(err, r)
      if err then
        notify(error_text("vtcode: session", err), vim.log.levels.ERROR)
      else
        set_active(function()
          state.pinned = r.sessionId
        end)
        stats_for(r.sessionId)
        notify("vtcode: active session " .. r.sessionId)
      end
      if cb then
        cb(err, r and r.sessionId)
      end
    end)
  end
  local function follow()
    set_active(function()
      state.pinned = nil
    end)
    pick_initial_session()
    notify("vtcode: following the most recently updated session")
    if cb then
      cb(nil, M.active_session())
    end
  end
  if session_id == "auto" then
    return follow()
  elseif session_id and session_id ~= "" then
    return pin(session_id)
  end
  request("vtcode/listSessions", {}, function(err, list)
    if err then
      return notify(error_text("vtcode: sessions", err), vim.log.levels.ERROR)
    end
    list = type(list) == "table" and list or {} -- each workspace's sessions newest first
    local items = { { auto = true } }
    for _, s in ipairs(list) do
      table.insert(items, s)
    end
    vim.ui.select(items, {
      prompt = "vtcode session:",
      format_item = function(s)
        if s.auto then
          return "Follow the most recently updated session" .. (state.pinned and "" or " (current)")
        end
        return string.format("%s%s  %d messages · updated %s", s.sessionId == M.active_session() and "* " or "",
          s.sessionId, s.messages or 0, relative(s.updatedAt))
      end,
    }, function(choice)
      if not choice then
        return
      end
      if choice.auto then
        follow()
      else
        pin(choice.sessionId)
      end
    end)
  end)
end

return M
