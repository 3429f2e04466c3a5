-- vtcode.context: :VtContext (the context map of the active session in a floating window: the
-- window as a bar of block characters by category, the pressure of every prepared request as a
-- sparkline with compactions marked, the cleared tool results, the artifacts) and :VtCompact!
-- (a compaction preview in a scratch buffer: :w applies it as edited, :q discards it).
-- Works on Neovim 0.7+.
local fmt = require("vtcode.format")

local M = {}

local SUMMARY_PREFIX = "Previous conversation summary:\n"
local CONTENT_MODIFIED = -32801

-- The categories of vtcode/contextMap: label, bar character and highlight group (linked to
-- standard groups, so every colour scheme gives them colours).
M.categories = {
  { key = "prefix", label = "System prompt & tools", char = "█", hl = "VtcodeCtxPrefix", link = "Special" },
  { key = "user", label = "User messages", char = "▇", hl = "VtcodeCtxUser", link = "Identifier" },
  { key = "assistant", label = "Assistant text", char = "▆", hl = "VtcodeCtxAssistant", link = "String" },
  { key = "toolCalls", label = "Tool calls", char = "▅", hl = "VtcodeCtxToolCalls", link = "Type" },
  { key = "toolResults", label = "Tool results", char = "▓", hl = "VtcodeCtxToolResults", link = "Constant" },
  { key = "clearedStubs", label = "Cleared stubs", char = "▒", hl = "VtcodeCtxCleared", link = "WarningMsg" },
  { key = "summary", label = "Compaction summary", char = "░", hl = "VtcodeCtxSummary", link = "Title" },
  { key = "free", label = "Free", char = "·", hl = "VtcodeCtxFree", link = "NonText" },
  { key = "reservedOutput", label = "Reserved output", char = "▁", hl = "VtcodeCtxReserved", link = "Comment" },
}
local by_key = {}
for _, c in ipairs(M.categories) do
  by_key[c.key] = c
end

local function define_highlights()
  local function link(name, to)
    -- `default` keeps a colour scheme's own definition (0.8+); 0.7 has no such key
    if not pcall(vim.api.nvim_set_hl, 0, name, { link = to, default = true }) then
      vim.api.nvim_set_hl(0, name, { link = to })
    end
  end
  for _, c in ipairs(M.categories) do
    link(c.hl, c.link)
  end
  link("VtcodeCtxMark", "ErrorMsg")
end

-- the plugin, set up (the first command may come before require("vtcode").setup())
local function vtcode()
  local vt = require("vtcode")
  if not vt._state.setup_done then
    vt.setup({})
  end
  return vt
end

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "vtcode" })
end

-- ---- pure rendering ------------------------------------------------------------------------

--- cells splits width cells among the categories by their tokens (largest remainder, at least one
--- cell for a category with tokens while cells remain). Returns a list of { category, cells }.
function M.cells(categories, capacity, width)
  local sum = 0
  for _, c in ipairs(categories) do
    sum = sum + math.max(0, c.tokens or 0)
  end
  local whole = math.max(capacity or 0, sum)
  local out = {}
  if whole <= 0 then
    return out
  end
  local used, rems = 0, {}
  for i, c in ipairs(categories) do
    local exact = math.max(0, c.tokens or 0) * width / whole
    local n = math.floor(exact)
    if n == 0 and exact > 0 then
      n = 1
    end
    out[i] = { category = c.category, cells = n }
    used = used + n
    table.insert(rems, { i = i, r = exact - math.floor(exact) })
  end
  table.sort(rems, function(a, b)
    return a.r > b.r
  end)
  local k = 1
  while used < width and #rems > 0 do
    out[rems[k].i].cells = out[rems[k].i].cells + 1
    used = used + 1
    k = k % #rems + 1
  end
  while used > width do -- the minimum cells overflowed: take them from the widest
    local widest = 1
    for i, o in ipairs(out) do
      if o.cells > out[widest].cells then
        widest = i
      end
    end
    out[widest].cells = out[widest].cells - 1
    used = used - 1
  end
  return out
end

--- bar renders the window as width block characters; returns the text and the highlight spans
--- { hl, from, to } in bytes.
function M.bar(categories, capacity, width)
  local parts, spans, pos = {}, {}, 0
  for _, c in ipairs(M.cells(categories, capacity, width)) do
    local st = by_key[c.category] or { char = "?", hl = "Normal" }
    if c.cells > 0 then
      local s = string.rep(st.char, c.cells)
      table.insert(parts, s)
      table.insert(spans, { hl = st.hl, from = pos, to = pos + #s })
      pos = pos + #s
    end
  end
  return table.concat(parts), spans
end

local spark_chars = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" }

--- sparkline renders the pressure of each turn (the last width of them) as one character each,
--- scaled to max(100%, the highest pressure), with a marks line under it: C for a compaction that
--- took effect for that request (one past the end when no request was prepared since), ! for a
--- large clear. Returns spark, marks, first turn shown, the scale.
function M.sparkline(turns, compactions, width)
  local first = math.max(1, #turns - width + 1)
  local top = 1
  for i = first, #turns do
    top = math.max(top, turns[i].pressure or 0)
  end
  local spark, marks = {}, {}
  for i = first, #turns do
    local t = turns[i]
    local level = math.floor(math.max(0, t.pressure or 0) / top * (#spark_chars - 1) + 0.5) + 1
    table.insert(spark, spark_chars[math.min(#spark_chars, level)])
    marks[i - first + 1] = t.largeClear and "!" or " "
  end
  local last = turns[#turns] and turns[#turns].turn or 0
  for _, c in ipairs(compactions or {}) do
    local col
    for i = first, #turns do
      if turns[i].turn == c.turn then
        col = i - first + 1
      end
    end
    if not col and c.turn > last then
      col = #turns - first + 2
    end
    if col then
      for j = #marks + 1, col - 1 do
        marks[j] = " "
      end
      marks[col] = "C"
    end
  end
  return table.concat(spark), (table.concat(marks):gsub("%s+$", "")), first, top
end

local function plural(n, word)
  return string.format("%d %s%s", n, word, n == 1 and "" or "s")
end

--- lines renders a context map as the floating window's lines; returns the lines, the
--- highlights { line (0-based), hl, from, to } and the artifact id of each artifact line (by
--- 1-based line number).
function M.lines(map, width)
  width = width or 60
  local lines, hls, artifact_at = {}, {}, {}
  local function add(s, hl)
    table.insert(lines, s)
    if hl then
      table.insert(hls, { line = #lines - 1, hl = hl, from = 0, to = #s })
    end
  end
  add("VT Code context · session " .. tostring(map.sessionId), "Title")
  local head = fmt.gauge(map) .. " tokens" -- the daemon's gauge, as in the statusline and VS Code
  if (map.capacity or 0) <= 0 then
    head = head .. " (capacity unknown)"
  end
  add(string.format("%s · %d of %d messages sent · %s · %s · %s", head, map.projectedMessages or 0, map.messages or 0,
    plural(#(map.turns or {}), "request"), plural(#(map.compactions or {}), "compaction"), tostring(map.state)))
  if type(map.receipt) == "table" then
    local rc = require("vtcode.receipt")
    add("Receipt: " .. rc.summary(map.receipt))
    local unused = rc.unused(map.receipt)
    if unused then
      add("Unused summarizer calls: " .. unused)
    end
  end
  add("")
  add("Context window")
  local bar, spans = M.bar(map.categories or {}, map.capacity, width)
  add(bar)
  for _, s in ipairs(spans) do
    table.insert(hls, { line = #lines - 1, hl = s.hl, from = s.from, to = s.to })
  end
  local whole = math.max(map.capacity or 0, 1)
  local sum = 0
  for _, c in ipairs(map.categories or {}) do
    sum = sum + math.max(0, c.tokens or 0)
  end
  whole = math.max(whole, sum)
  for _, c in ipairs(map.categories or {}) do
    local st = by_key[c.category] or { label = c.category, char = "?", hl = "Normal" }
    local msgs = ""
    if c.category ~= "free" and c.category ~= "reservedOutput" and (c.messages or 0) > 0 then
      msgs = plural(c.messages, "message")
    end
    local row = string.format("%s %-22s %9s %6.1f%%  %s", st.char, st.label, fmt.int(c.tokens), 100 * math.max(0, c.tokens or 0) / whole, msgs)
    add((row:gsub("%s+$", "")))
    table.insert(hls, { line = #lines - 1, hl = st.hl, from = 0, to = #st.char })
  end
  add("")
  local turns = map.turns or {}
  if #turns == 0 then
    add("Pressure per request: no request prepared yet")
  else
    local spark, marks, first, top = M.sparkline(turns, map.compactions, width)
    add(string.format("Pressure per request (turns %d–%d, top %s; C compaction, ! large clear)", turns[first].turn,
      turns[#turns].turn, fmt.percent(top)))
    add(spark, "Identifier")
    if marks ~= "" then
      add(marks, "VtcodeCtxMark")
    end
    local t = turns[#turns]
    add(string.format("last: turn %d · %s · %s tokens · %s", t.turn, fmt.percent(t.pressure), fmt.int(t.tokens), tostring(t.state)))
  end
  for _, c in ipairs(map.compactions or {}) do
    add(string.format("  compaction for turn %d: %s (%s) %s -> %s tokens", c.turn, tostring(c.trigger), tostring(c.mode),
      fmt.int(c.originalTokens), fmt.int(c.compactedTokens)))
  end
  add("")
  local cleared = map.cleared or {}
  add(string.format("Cleared tool results (%d)", #cleared))
  for _, c in ipairs(cleared) do
    add(string.format("  %-14s %-22s %9s -> %-6s turn %s", tostring(c.tool ~= "" and c.tool or "-"), tostring(c.callId),
      fmt.int(c.originalTokens), fmt.int(c.stubTokens), c.pending and ("next (" .. c.turn .. ")") or tostring(c.turn)))
  end
  add("")
  local arts = vim.deepcopy(map.artifacts or {})
  table.sort(arts, function(a, b)
    return tostring(a.createdAt) > tostring(b.createdAt)
  end)
  add(string.format("Artifacts (%d) — R on one restores it", #arts))
  for _, a in ipairs(arts) do
    local when = tostring(a.createdAt):gsub("T", " "):gsub("%.%d+", ""):gsub("Z$", "")
    add(string.format("  %s  %-16s %4d messages  %s", when, (a.mode ~= nil and a.mode ~= "") and (a.trigger .. " (" .. a.mode .. ")") or tostring(a.trigger),
      a.messages or 0, tostring(a.artifactId)))
    artifact_at[#lines] = a.artifactId
  end
  add("")
  add("q closes · r refreshes · R restores the artifact under the cursor", "Comment")
  return lines, hls, artifact_at
end

-- ---- :VtContext ----------------------------------------------------------------------------

local ns = vim.api.nvim_create_namespace("vtcode_context")
local view = { buf = nil, win = nil, session = nil, artifact_at = {} }
M._view = view

local function valid_win(w)
  return w and vim.api.nvim_win_is_valid(w)
end

local function fill(buf, map)
  local width = math.max(30, math.min(72, vim.o.columns - 16))
  local lines, hls, artifact_at = M.lines(map, width)
  view.artifact_at = artifact_at
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, h in ipairs(hls) do
    vim.api.nvim_buf_set_extmark(buf, ns, h.line, h.from, { end_col = h.to, hl_group = h.hl })
  end
  return lines
end

local function open_window(buf, lines)
  local w = 0
  for _, l in ipairs(lines) do
    w = math.max(w, vim.fn.strdisplaywidth(l))
  end
  w = math.min(w + 2, vim.o.columns - 4)
  local h = math.min(#lines, vim.o.lines - 4)
  local cfg = {
    relative = "editor", style = "minimal", border = "rounded", width = w, height = h,
    row = math.max(0, math.floor((vim.o.lines - h) / 2) - 1), col = math.max(0, math.floor((vim.o.columns - w) / 2)),
  }
  if valid_win(view.win) then
    vim.api.nvim_win_set_config(view.win, cfg)
  else
    view.win = vim.api.nvim_open_win(buf, true, cfg)
  end
  vim.wo[view.win].wrap = false
  vim.wo[view.win].cursorline = false
end

--- show fetches the context map of the active session and shows it in a floating window;
--- cb(err, map) is optional.
function M.show(cb)
  local vt = vtcode()
  local id = vt.active_session()
  if not id then
    notify("vtcode: no active session. An agent opens one through require('vtcode').client(); pick a stored one with :VtSession", vim.log.levels.WARN)
    return
  end
  local function got(err, map)
    if err then
      notify("vtcode: context map: " .. tostring(err.message or vim.inspect(err)), vim.log.levels.ERROR)
      if cb then
        cb(err)
      end
      return
    end
    define_highlights()
    if not (view.buf and vim.api.nvim_buf_is_valid(view.buf)) then
      view.buf = vim.api.nvim_create_buf(false, true)
      vim.bo[view.buf].bufhidden = "wipe"
      vim.bo[view.buf].filetype = "vtcodecontext"
      local b = view.buf
      local o = { buffer = b, nowait = true, silent = true }
      vim.keymap.set("n", "q", function()
        M.close()
      end, o)
      vim.keymap.set("n", "<Esc>", function()
        M.close()
      end, o)
      vim.keymap.set("n", "r", function()
        M.show()
      end, o)
      vim.keymap.set("n", "R", function()
        local aid = view.artifact_at[vim.api.nvim_win_get_cursor(0)[1]]
        if not aid then
          return notify("vtcode: put the cursor on an artifact line to restore it")
        end
        require("vtcode").restore(aid, function()
          M.refresh()
        end)
      end, o)
    end
    view.session = id
    open_window(view.buf, fill(view.buf, map))
    if cb then
      cb(nil, map)
    end
  end
  vt.request("vtcode/contextMap", { sessionId = id }, function(err, map)
    if err and err.code == -32001 then -- a stored session the daemon has not loaded yet
      vt.request("vtcode/openSession", { sessionId = id }, function(err2)
        if err2 then
          return got(err2)
        end
        vt.request("vtcode/contextMap", { sessionId = id }, got)
      end)
      return
    end
    got(err, map)
  end)
end

--- close closes the :VtContext window.
function M.close()
  if valid_win(view.win) then
    vim.api.nvim_win_close(view.win, true)
  end
  view.win = nil
end

--- refresh redraws an open :VtContext window (after a pressure change of its session).
function M.refresh(session_id)
  if valid_win(view.win) and (session_id == nil or session_id == view.session) then
    M.show()
  end
end

-- ---- :VtCompact! ---------------------------------------------------------------------------

local pending = {} -- bufnr -> { sessionId, previewId, editable }
M._pending = pending

local function wipe(buf)
  vim.schedule(function()
    if vim.api.nvim_buf_is_valid(buf) then
      pending[buf] = nil
      vim.api.nvim_buf_delete(buf, { force = true })
    end
  end)
end

--- apply commits the preview of buffer buf with the buffer's text as the summary (:w).
function M.apply(buf, cb)
  local vt = require("vtcode")
  local p = pending[buf]
  if not p then
    notify("vtcode: this compaction preview is gone; run :VtCompact! again", vim.log.levels.WARN)
    return
  end
  local params = { sessionId = p.sessionId, previewId = p.previewId }
  if p.editable then
    params.summary = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  end
  vt.request("vtcode/compact", params, function(err, result)
    if err then
      if err.code == CONTENT_MODIFIED then
        notify("vtcode: the history changed since the preview; nothing was compacted. Run :VtCompact! again.", vim.log.levels.WARN)
        p.done = true
        vim.bo[buf].modified = false
        wipe(buf)
      else
        notify("vtcode: applying the compaction failed: " .. tostring(err.message), vim.log.levels.ERROR)
      end
    else
      p.done = true
      vim.bo[buf].modified = false
      vt._state.last_compaction = result
      notify(result.message)
      wipe(buf)
    end
    if cb then
      cb(err, result)
    end
  end)
end

--- preview asks for a compaction preview of the active session and opens its summary in a
--- scratch buffer; cb(err, preview) is optional.
function M.preview(instructions, cb)
  local vt = vtcode()
  local id = vt.active_session()
  if not id then
    notify("vtcode: no active session; pick one with :VtSession", vim.log.levels.WARN)
    return
  end
  local params = { sessionId = id, preview = true }
  if instructions and instructions ~= "" then
    params.instructions = instructions
  end
  vt.request("vtcode/compact", params, function(err, p)
    if err then
      notify("vtcode: compaction preview failed: " .. tostring(err.message), vim.log.levels.ERROR)
    elseif not p.previewId or p.previewId == "" then
      notify("vtcode: " .. tostring(p.message)) -- "Nothing to preview: Conversation is already compact."
    else
      for b, q in pairs(pending) do -- a newer preview replaces the older on the server too
        q.done = true
        wipe(b)
      end
      local buf = vim.api.nvim_create_buf(true, false)
      vim.api.nvim_buf_set_name(buf, "vtcode://compaction-preview/" .. id .. "/" .. p.previewId .. ".md")
      vim.bo[buf].buftype = "acwrite"
      vim.bo[buf].bufhidden = "wipe"
      vim.bo[buf].swapfile = false
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(p.summary or "", "\n", { plain = true }))
      vim.bo[buf].modified = false
      vim.bo[buf].filetype = "markdown"
      pending[buf] = { sessionId = id, previewId = p.previewId, editable = p.editable }
      local group = vim.api.nvim_create_augroup("vtcode_preview_" .. buf, { clear = true })
      vim.api.nvim_create_autocmd("BufWriteCmd", {
        group = group, buffer = buf,
        callback = function()
          M.apply(buf)
        end,
      })
      vim.api.nvim_create_autocmd("BufWipeout", {
        group = group, buffer = buf,
        callback = function()
          local q = pending[buf]
          pending[buf] = nil
          if q and not q.done then
            notify("vtcode: compaction preview discarded; the history is unchanged")
          end
        end,
      })
      vim.cmd("split")
      vim.api.nvim_win_set_buf(0, buf)
      notify(string.format("vtcode: compaction preview · %d → %d messages, %s → %s tokens. Nothing changed yet: %s",
        p.originalMessageCount, p.compactedMessageCount, fmt.tokens(p.originalTokens), fmt.tokens(p.compactedTokens),
        p.editable and "edit the summary, :w applies it, :q discards it." or "the summary is opaque; :w applies it, :q discards it."))
    end
    if cb then
      cb(err, p)
    end
  end)
end

M.SUMMARY_PREFIX = SUMMARY_PREFIX

return M
