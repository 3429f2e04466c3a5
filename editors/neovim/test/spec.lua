-- Headless test of the vtcode plugin against the real daemon. Run by test/run.sh:
--   VTCODE_LS_BIN=… VTCODE_TEST_WS=<empty dir> VTCODE_TEST_OUT=<file> nvim --headless -u NONE -i NONE \
--     --cmd 'set rtp^=<editors/neovim>' -c 'luafile test/spec.lua'
-- Prints "ok - …" / "not ok - …" lines and "N passed, N failed"; exits 1 on failure.
local bin = assert(os.getenv("VTCODE_LS_BIN"), "VTCODE_LS_BIN")
local ws = assert(os.getenv("VTCODE_TEST_WS"), "VTCODE_TEST_WS")
local out_path = os.getenv("VTCODE_TEST_OUT")
local out = out_path and io.open(out_path, "w") or nil

local function emit(line)
  io.stdout:write(line .. "\n")
  if out then
    out:write(line .. "\n")
    out:flush()
  end
end

local v = vim.version()
local nvim = string.format("%d.%d.%d", v.major, v.minor, v.patch)
local passed, failed = 0, 0

local function test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    passed = passed + 1
    emit("ok - " .. name)
  else
    failed = failed + 1
    emit("not ok - " .. name .. "\n    " .. tostring(err):gsub("\n", "\n    "))
  end
end

local function eq(got, want, what)
  if not vim.deep_equal(got, want) then
    error(string.format("%s: got %s, want %s", what or "value", vim.inspect(got), vim.inspect(want)), 2)
  end
end

local function wait(ms, cond, what)
  if not vim.wait(ms, cond, 20) then
    error("timed out waiting for " .. what, 2)
  end
end

-- deprecated Neovim API used during the run: vim.deprecate() is called for soft deprecations too
-- (it only warns once a feature is close to removal), so wrapping it catches them early.
local deprecations = {} -- "name (use alternative)" -> where it was first called
if vim.deprecate then
  local deprecate = vim.deprecate
  vim.deprecate = function(name, alternative, ...)
    local key = string.format("%s (use %s)", tostring(name), tostring(alternative))
    deprecations[key] = deprecations[key] or debug.traceback("", 2):gsub("^%s*stack traceback:%s*", "")
    return deprecate(name, alternative, ...)
  end
end

-- captured notifications
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = tostring(msg), level = level })
end
local function noted(pattern, since)
  for i = (since or 1), #notes do
    if notes[i].msg:find(pattern) then
      return notes[i]
    end
  end
end
local function wait_note(pattern, what, since)
  wait(15000, function()
    return noted(pattern, since) ~= nil
  end, what .. " (notifications: " .. vim.inspect(vim.tbl_map(function(n)
    return n.msg
  end, notes)) .. ")")
  return noted(pattern, since)
end

-- a synthetic agent session: user turns with read_file batches of ~2k-token results (40 messages
-- for 18 batches), and a closing assistant message
local function tool_output(batch)
  local lines = {}
  for j = 0, 59 do
    table.insert(lines, string.format(
      "%4d  func handler%d_%d(ctx context.Context, req *Request%d) (*Response, error) { return svc%d.Do(ctx, req, %d) }",
      j + 1, batch, j, j % 7, batch, j * 17 % 101))
  end
  return table.concat(lines, "\n")
end
local function agent_session(batches, tag)
  local msgs = { { role = "user", content = "Fix the failing test TestHandler in pkg/server (" .. tag .. "). Do not change the public API." } }
  for i = 0, batches - 1 do
    if i > 0 and i % 6 == 0 then
      table.insert(msgs, { role = "user", content = "Keep going: check file_" .. i .. ".go next (" .. tag .. ")." })
    end
    local id = string.format("call_%s_%d", tag, i)
    table.insert(msgs, {
      role = "assistant",
      content = "Reading file " .. i .. " to find the handler.",
      toolCalls = { { id = id, name = "read_file", arguments = vim.fn.json_encode({ path = "pkg/server/file_" .. i .. ".go" }) } },
    })
    table.insert(msgs, { role = "tool", toolCallId = id, toolName = "read_file", content = tool_output(i) })
  end
  table.insert(msgs, { role = "assistant", content = "Ran `go test ./pkg/server` (exit code 1): TestHandler still fails." })
  return msgs
end

local vt = require("vtcode")
local fmt = require("vtcode.format")

-- a synchronous request through the plugin's client, as an agent plugin would send it
local function rpc(method, params)
  local done, e, r = false, nil, nil
  vt.request(method, params, function(err, res)
    done, e, r = true, err, res
  end)
  wait(15000, function()
    return done
  end, method)
  if e then
    error(method .. ": " .. vim.inspect(e), 2)
  end
  return r
end

local function percent(s)
  return tonumber((s or ""):match("^ctx (%d+)%%$"))
end

-- ---- pure helpers --------------------------------------------------------------------------

test("format.tokens / percent / statusline", function()
  -- the table the daemon's formatters (session/display.go) and the VS Code extension's are tested with
  local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
  local cases = 0
  for line in io.lines(here .. "/../../testdata/figures.txt") do
    local kind, value, want = line:match("^(%a+)%s+(%S+)%s+(%S+)%s*$")
    if kind then
      local got = kind == "tokens" and fmt.tokens(tonumber(value)) or fmt.percent(tonumber(value))
      eq(got, want, "figures.txt: " .. kind .. "(" .. value .. ")")
      cases = cases + 1
    end
  end
  assert(cases >= 20, cases .. " cases")
  eq(fmt.tokens(-1), "0", "tokens(-1)")
  -- the statusline shows the daemon's display (rpc/doc.go), not figures of its own
  local gauge = { percent = "62%", used = "80.1k", window = "128k", text = "62% · 80.1k/128k" }
  eq(fmt.statusline({ pressure = 0.62, capacity = 128000, projectedTokens = 78100, display = gauge }), "ctx 62%", "statusline")
  eq(fmt.statusline({ pressure = 0, capacity = 0, projectedTokens = 78100,
    display = { percent = "", used = "80.1k", window = "", text = "80.1k" } }), "ctx 80.1k", "statusline without capacity: used, prefix included")
  eq(fmt.statusline(nil), "", "statusline without pressure")
  eq(fmt.gauge({ display = gauge }), "62% · 80.1k/128k", "gauge")
  eq(fmt.int(1234567), "1,234,567", "int")
end)

test("format.parse_policy builds the nested setPolicy object", function()
  local p = assert(fmt.parse_policy({ "toolResultClearing.keepToolUses=3", "toolResultClearing.enabled=false",
    "context.tokenizer=approx", "autoCompaction.threshold_ratio=0.5", "context.max_context_tokens=64000", 'a.b="7"' }))
  eq(p, {
    toolResultClearing = { keepToolUses = 3, enabled = false },
    context = { tokenizer = "approx", maxContextTokens = 64000 },
    autoCompaction = { thresholdRatio = 0.5 },
    a = { b = "7" },
  }, "policy")
  eq(vim.fn.json_decode(vim.fn.json_encode(p)).toolResultClearing.keepToolUses, 3, "json round trip")
  local bad, err = fmt.parse_policy({ "keepToolUses" })
  eq(bad, nil, "bad arg")
  assert(err:find("key=value"), err)
  eq(select(1, fmt.parse_policy({})), nil, "no args")
  eq(select(1, fmt.parse_policy({ "a=1", "a.b=2" })), nil, "conflict")
end)

local ctx = require("vtcode.context")
local function cat(t)
  local out = {}
  for _, k in ipairs({ "prefix", "user", "assistant", "toolCalls", "toolResults", "clearedStubs", "summary", "free", "reservedOutput" }) do
    table.insert(out, { category = k, tokens = t[k] or 0, messages = 1 })
  end
  return out
end

test("context.bar: one block character per cell, by category, filling the width", function()
  local cats = cat({ prefix = 1000, user = 400, assistant = 1600, toolCalls = 500, toolResults = 8000, clearedStubs = 100,
    summary = 0, free = 16304, reservedOutput = 4096 })
  local bar, spans = ctx.bar(cats, 32000, 64)
  eq(vim.fn.strchars(bar), 64, "cells")
  eq(vim.fn.strdisplaywidth(bar), 64, "display width")
  local count = {}
  for _, c in ipairs(ctx.cells(cats, 32000, 64)) do
    count[c.category] = c.cells
  end
  eq(count.toolResults, 16, "tool results: 8000/32000 of 64")
  eq(count.reservedOutput, 8, "reserved output")
  eq(count.clearedStubs, 1, "a small category still shows")
  eq(count.summary, 0, "an empty category does not")
  eq(select(2, bar:gsub("▓", "")), 16, "the tool-result character")
  eq(spans[1].hl, "VtcodeCtxPrefix", "first span")
  eq(spans[#spans].to, #bar, "spans cover the bar")
end)

test("context.sparkline: one character per request, compactions and large clears marked", function()
  local turns = {
    { turn = 1, pressure = 0.1 }, { turn = 2, pressure = 0.5, largeClear = true }, { turn = 3, pressure = 1.0 },
    { turn = 4, pressure = 0.2 },
  }
  local spark, marks, first, top = ctx.sparkline(turns, { { turn = 4 }, { turn = 5 } }, 60)
  eq(spark, "▂▅█▂", "spark")
  eq(marks, " ! CC", "marks: a large clear at 2, compactions for 4 and the next request")
  eq({ first, top }, { 1, 1.0 }, "first turn, scale")
  local many = {}
  for i = 1, 100 do
    many[i] = { turn = i, pressure = i / 100 }
  end
  local s2, _, f2 = ctx.sparkline(many, {}, 40)
  eq(vim.fn.strchars(s2), 40, "the last 40 requests")
  eq(f2, 61, "from turn 61")
end)

-- The shared transcript: the VS Code extension's applier replays the same file
-- (editors/vscode/test/unit/delta.test.cjs).
test("vtcode.delta replays editors/testdata/projection_deltas.txtar to its projections", function()
  local d = require("vtcode.delta")
  local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
  local f = assert(io.open(here .. "/../../testdata/projection_deltas.txtar", "r"))
  local text = f:read("*a")
  f:close()
  local sections = {}
  for line in (text .. "\n"):gmatch("(.-)\n") do
    local name = line:match("^%-%- (.+) %-%-$")
    if name then
      table.insert(sections, { name = name, body = {} })
    elseif #sections > 0 then
      table.insert(sections[#sections].body, line)
    end
  end
  local got, steps = {}, 0
  for _, sec in ipairs(sections) do
    local body = vim.fn.json_decode(table.concat(sec.body, "\n"))
    if sec.name == "want" then
      assert(vim.deep_equal(got, body), "the final projections: " .. vim.inspect(got))
    else
      local kind, sid = sec.name:match("^(%S+) (%S+)$")
      steps = steps + 1
      local revision = body.revision
      local r, err = d.apply(sid, body)
      if kind == "error" then
        eq(r, nil, "step " .. steps .. ": refused")
        assert(err and err:find("does not hold", 1, true), "step " .. steps .. ": " .. tostring(err))
        eq(d.params({ sessionId = sid }).baseRevision, nil, "step " .. steps .. ": " .. sid .. " is forgotten")
      else
        eq(kind, "result", "section " .. sec.name)
        assert(r and r.delta == nil, "step " .. steps .. ": callers see no delta")
        got[sid] = r.messages
        eq(d.params({ sessionId = sid }).baseRevision, revision, "step " .. steps .. ": the next baseRevision of " .. sid)
      end
    end
  end
  eq(steps, 11, "every step of the transcript was replayed")
  for _, sid in ipairs({ "s1", "s2", "s3" }) do
    d.forget(sid)
  end
end)

test("setup({ proxy = … }) travels as initializationOptions.proxy beside the policy", function()
  eq(vt._init_options({ init_options = { context = { maxContextTokens = 64000 } } }), { context = { maxContextTokens = 64000 } }, "no proxy")
  eq(vt._init_options({ proxy = "127.0.0.1:8787" }), { proxy = { listen = "127.0.0.1:8787" } }, "string")
  eq(vt._init_options({ proxy = { listen = "0.0.0.0:8787", allow_remote = true, secret_env = "VT_SECRET" },
    init_options = { context = { maxContextTokens = 64000 } } }),
    { context = { maxContextTokens = 64000 }, proxy = { listen = "0.0.0.0:8787", allowRemote = true, secretEnv = "VT_SECRET" } }, "table")
  eq(vt._init_options({ proxy = { listen = "" } }), nil, "empty listen")
end)

-- ---- against the daemon --------------------------------------------------------------------

-- A fake Anthropic Messages API on loopback, the summarizer of the anthropic sessions below: it
-- answers each POST …/v1/messages with the next scripted usage in Anthropic's wire format (a
-- message, or its event stream when the request streams), and 500 when the script is empty. The
-- user configuration (written before the daemon starts) points the anthropic provider at it, with
-- a key variable set only here.
local upstream = { replies = {}, requests = {} }
do
  local uv = vim.uv or vim.loop
  local server = assert(uv.new_tcp())
  assert(server:bind("127.0.0.1", 0))
  local text = "## Goal\nFix the failing test TestHandler in pkg/server.\n\n## Next steps\n1. Run go test ./pkg/server."
  local function usage_of(u)
    return { input_tokens = u.input or 0, cache_read_input_tokens = u.cacheRead or 0,
      cache_creation_input_tokens = u.cacheWrite1h or 0,
      cache_creation = { ephemeral_5m_input_tokens = 0, ephemeral_1h_input_tokens = u.cacheWrite1h or 0 },
      output_tokens = u.output or 0 }
  end
  -- returns content type, body
  local function answer(u, stream)
    local msg = { id = "msg_01NvimBills", type = "message", role = "assistant", model = "claude-sonnet-4-5",
      content = { { type = "text", text = text } }, stop_reason = "end_turn", stop_sequence = vim.NIL, usage = usage_of(u) }
    if not stream then
      return "application/json", vim.fn.json_encode(msg)
    end
    local start = usage_of(u)
    start.output_tokens = 1
    msg.content, msg.stop_reason, msg.usage = {}, vim.NIL, start
    local evs = {
      { "message_start", { type = "message_start", message = msg } },
      { "content_block_start", { type = "content_block_start", index = 0, content_block = { type = "text", text = "" } } },
      { "content_block_delta", { type = "content_block_delta", index = 0, delta = { type = "text_delta", text = text } } },
      { "content_block_stop", { type = "content_block_stop", index = 0 } },
      { "message_delta", { type = "message_delta", delta = { stop_reason = "end_turn", stop_sequence = vim.NIL },
        usage = { output_tokens = u.output or 0 } } },
      { "message_stop", { type = "message_stop" } },
    }
    local out = {}
    for _, e in ipairs(evs) do
      table.insert(out, "event: " .. e[1] .. "\ndata: " .. vim.fn.json_encode(e[2]) .. "\n\n")
    end
    return "text/event-stream", table.concat(out)
  end
  assert(server:listen(16, function(err)
    assert(not err, err)
    local conn = uv.new_tcp()
    server:accept(conn)
    local buf = ""
    conn:read_start(function(rerr, chunk)
      if rerr or not chunk then
        conn:close()
        return
      end
      buf = buf .. chunk
      local head_end = buf:find("\r\n\r\n", 1, true)
      if not head_end then
        return
      end
      local head = buf:sub(1, head_end - 1)
      local length = tonumber(head:lower():match("\r\ncontent%-length:%s*(%d+)")) or 0
      if #buf < head_end + 3 + length then
        return
      end
      conn:read_stop()
      -- out of the loop callback: vim.fn is not allowed there
      vim.schedule(function()
        table.insert(upstream.requests, { line = head:match("^[^\r]*"), body = buf:sub(head_end + 4, head_end + 3 + length) })
        local req = vim.fn.json_decode(upstream.requests[#upstream.requests].body)
        local u = table.remove(upstream.replies, 1)
        local status, ctype, body = "500 Internal Server Error", "application/json",
          '{"type":"error","error":{"type":"api_error","message":"no scripted reply"}}'
        if u then
          status = "200 OK"
          ctype, body = answer(u, req.stream == true)
        end
        conn:write(string.format("HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
          status, ctype, #body, body), function()
          conn:close()
        end)
      end)
    end)
  end))
  upstream.url = "http://127.0.0.1:" .. server:getsockname().port
  local dir = assert(os.getenv("XDG_CONFIG_HOME"), "XDG_CONFIG_HOME") .. "/vtcode"
  vim.fn.mkdir(dir, "p")
  local f = assert(io.open(dir .. "/vtcode.toml", "w"))
  f:write(string.format('[providers.anthropic]\nbase_url = "%s"\napi_key_env = "VTCODE_NVIM_TEST_ANTHROPIC_KEY"\n', upstream.url))
  f:close()
  vim.env.VTCODE_NVIM_TEST_ANTHROPIC_KEY = "sk-ant-nvim-test-0001"
end

local sid, before, after

test("setup starts the client on " .. (vim.lsp.start and "vim.lsp.start" or "vim.lsp.start_client"), function()
  vt.setup({ cmd = { bin }, root_dir = ws })
  wait(15000, function()
    return vt._state.initialized
  end, "initialize")
  local c = vt.client()
  assert(c, "client()")
  eq(c.name, "vtcode", "client name")
  eq(vt.statusline(), "", "statusline without a session")
  eq(vt.active_session(), nil, "no active session")
end)

test("an agent's turns through client() make its session active; the statusline shows the pressure", function()
  local o = rpc("vtcode/openSession", { contextWindow = 32000 })
  sid = o.sessionId
  local r = rpc("vtcode/appendMessages", { sessionId = sid, messages = agent_session(18, "nvim") })
  eq(r.messages, 40, "messages")
  wait(10000, function()
    local p = vt.pressure()
    return vt.active_session() == sid and p and p.originalTokens > 20000 and percent(vt.statusline()) ~= nil
  end, "statusline (" .. vt.statusline() .. ")")
  local prep = rpc("vtcode/prepareRequest", { sessionId = sid, systemPrompt = "You are a coding agent." })
  wait(10000, function()
    return vt.pressure().projectedTokens == prep.stats.projectedTokens
  end, "the pressure of the prepared request")
  before = vt.statusline()
  emit("    statusline before compaction: " .. before)
  eq(before, "ctx " .. prep.stats.display.percent, "the statusline shows the daemon's figure of the request")
  eq(vt.pressure().capacity, 32000, "capacity")
end)

test(":VtStats shows the numbers", function()
  local mark = #notes + 1
  vim.cmd("VtStats")
  local n = wait_note("Session " .. vim.pesc(sid), ":VtStats", mark)
  assert(n.msg:find("cache reuse (next request)", 1, true), n.msg)
  assert(n.msg:find("of 40 messages sent", 1, true), n.msg)
  assert(n.msg:find("tool results cleared", 1, true), n.msg)
  assert(n.msg:find("capacity%s+32,000"), n.msg)
  assert(n.msg:find("compactions%s+0"), n.msg)
end)

test(":VtCompact completes with progress seen; the statusline drops", function()
  local mark, pmark = #notes + 1, #vt.progress_messages()
  vim.cmd("VtCompact")
  local n = wait_note("^Context compacted · ", "compaction result", mark)
  local begin, finish
  for i = pmark + 1, #vt.progress_messages() do
    local e = vt.progress_messages()[i]
    if e.kind == "begin" then
      begin = e
    elseif e.kind == "end" then
      finish = e
    end
  end
  assert(begin, "a progress begin")
  eq(begin.title, "Compacting context...", "progress title")
  assert(finish and finish.message:find("^Context compacted · "), "progress end: " .. vim.inspect(finish))
  assert(n.msg:find("%(40 %-> %d+ messages, local%)"), n.msg)
  wait(10000, function()
    local p = percent(vt.statusline())
    return p ~= nil and p < percent(before)
  end, "a lower statusline than " .. before .. " (now " .. vt.statusline() .. ")")
  after = vt.statusline()
  emit("    statusline after compaction: " .. after)
end)

test(":VtPolicy key=value… sets nested policy keys; bad values are reported", function()
  local mark = #notes + 1
  vim.cmd("VtPolicy toolResultClearing.keepToolUses=3 autoCompaction.enabled=false")
  wait_note("policy %(session " .. vim.pesc(sid) .. "%) set", ":VtPolicy", mark)
  local p = rpc("vtcode/getPolicy", { sessionId = sid })
  eq(p.toolResultClearing.keepToolUses, 3, "keepToolUses")
  eq(p.autoCompaction.enabled, false, "autoCompaction.enabled")
  mark = #notes + 1
  vim.cmd("VtPolicy toolResultClearing.keepToolUses=-1")
  local n = wait_note("policy rejected", "rejection", mark)
  assert(n.msg:find("toolResultClearing.keepToolUses", 1, true), n.msg)
  eq(rpc("vtcode/getPolicy", { sessionId = sid }).toolResultClearing.keepToolUses, 3, "unchanged")
end)

test(":VtRestore picks an artifact with vim.ui.select and restores it", function()
  local shown
  vim.ui.select = function(items, opts, on_choice)
    shown = vim.tbl_map(opts.format_item, items)
    on_choice(items[1], 1)
  end
  local mark = #notes + 1
  vim.cmd("VtRestore")
  wait_note("history restored %(40 messages%)", ":VtRestore", mark)
  assert(shown and shown[1]:find("40 messages · manual compaction (local)", 1, true), vim.inspect(shown))
  wait(10000, function()
    local p = vt.pressure()
    return p.originalTokens > 20000 and percent(vt.statusline()) > percent(after)
  end, "the statusline above " .. after .. " again (now " .. vt.statusline() .. ")")
end)

test(":VtCompact with instructions", function()
  local mark = #notes + 1
  vim.cmd("VtCompact keep the failing test names and exact commands")
  wait_note("^Context compacted · ", "compaction result", mark)
  eq(vt._state.last_compaction.trigger, "manual", "trigger")
end)

test(":VtSession picks the active session; auto follows the most recently updated", function()
  local o = rpc("vtcode/openSession", { contextWindow = 64000 })
  rpc("vtcode/appendMessages", { sessionId = o.sessionId, messages = agent_session(2, "other") })
  wait(10000, function()
    return vt.active_session() == o.sessionId
  end, "following the updated session")
  local shown
  vim.ui.select = function(items, opts, on_choice)
    shown = vim.tbl_map(opts.format_item, items)
    for i, it in ipairs(items) do
      if it.sessionId == sid then
        return on_choice(it, i)
      end
    end
    on_choice(nil)
  end
  vim.cmd("VtSession")
  wait(10000, function()
    return vt.active_session() == sid and vt._state.pinned == sid
  end, "the picked session")
  assert(shown[1]:find("Follow the most recently updated session", 1, true), vim.inspect(shown))
  rpc("vtcode/appendMessages", { sessionId = o.sessionId, messages = { { role = "user", content = "next" } } })
  rpc("vtcode/projectionStats", { sessionId = o.sessionId })
  eq(vt.active_session(), sid, "the picked session stays active")
  vim.cmd("VtSession auto")
  rpc("vtcode/appendMessages", { sessionId = o.sessionId, messages = { { role = "user", content = "again" } } })
  wait(10000, function()
    return vt.active_session() == o.sessionId
  end, "following again")
end)

local function context_lines()
  local buf = vim.api.nvim_win_get_buf(ctx._view.win)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end
local function find_line(lines, pattern)
  for i, l in ipairs(lines) do
    if l:find(pattern) then
      return i, l
    end
  end
end

test(":VtContext shows the window, the pressure per request and the cleared results in a float", function()
  vim.cmd("VtSession " .. sid)
  wait(10000, function()
    return vt.active_session() == sid
  end, "the pinned session")
  rpc("vtcode/setPolicy", { sessionId = sid, policy = { autoCompaction = { enabled = false } } })
  local msgs = agent_session(18, "ctx")
  local preps = {}
  for _, range in ipairs({ { 1, 13 }, { 14, 27 }, { 28, 40 } }) do
    table.insert(preps, rpc("vtcode/prepareRequest", { sessionId = sid, systemPrompt = "You are a coding agent.",
      messages = vim.list_slice(msgs, range[1], range[2]) }))
  end
  local map = rpc("vtcode/contextMap", { sessionId = sid })
  local done
  vim.cmd("VtContext")
  wait(10000, function()
    return ctx._view.win and vim.api.nvim_win_is_valid(ctx._view.win)
  end, "the float")
  eq(vim.api.nvim_win_get_config(ctx._view.win).relative, "editor", "a floating window")
  eq(vim.api.nvim_get_current_win(), ctx._view.win, "focused")
  local lines = context_lines()
  emit("    " .. table.concat(vim.list_slice(lines, 1, 16), "\n    "))
  assert(lines[1]:find("session " .. vim.pesc(sid), 1), lines[1])
  assert(lines[2]:find(string.format("%d requests", #map.turns), 1, true), lines[2])
  local bi = find_line(lines, "^Context window$")
  local bar = lines[bi + 1]
  eq(vim.fn.strchars(bar), vim.fn.strdisplaywidth(bar), "a bar of single-width block characters")
  assert(vim.fn.strchars(bar) >= 30, bar)
  for _, c in ipairs(map.categories) do
    local _, row = find_line(lines, "^[^ ]+ " .. vim.pesc(ctx.categories[({ prefix = 1, user = 2, assistant = 3, toolCalls = 4,
      toolResults = 5, clearedStubs = 6, summary = 7, free = 8, reservedOutput = 9 })[c.category]].label) .. " ")
    assert(row and row:find(fmt.int(c.tokens), 1, true), c.category .. ": " .. tostring(row))
  end
  local si = find_line(lines, "^Pressure per request")
  eq(vim.fn.strchars(lines[si + 1]), #map.turns, "one sparkline character per request")
  for i, p in ipairs(preps) do
    local t = map.turns[#map.turns - #preps + i]
    eq(t.tokens, p.stats.projectedTokens + p.stats.prefixTokens, "turn " .. t.turn)
  end
  local ci, cl = find_line(lines, "^Cleared tool results")
  eq(cl, string.format("Cleared tool results (%d)", #map.cleared), "cleared header")
  assert(#map.cleared > 0, "results are cleared")
  for j, c in ipairs(map.cleared) do
    local l = lines[ci + j]
    assert(l:find(vim.pesc(c.callId)) and l:find("read_file", 1, true) and l:find("turn " .. c.turn .. "$"), l)
  end
  -- it follows the session: a compaction shows up without reopening
  rpc("vtcode/compact", { sessionId = sid })
  wait(10000, function()
    return find_line(context_lines(), "^  compaction for turn " .. (#map.turns + 1) .. ": manual") ~= nil
  end, "the compaction in the open float:\n" .. table.concat(context_lines(), "\n"))
  -- R on an artifact line restores it
  local ai = find_line(context_lines(), "^  %d%d%d%d%-%d%d%-%d%d .* manual %(local%) +" .. map.messages .. " messages")
  assert(ai, "the artifact of the compaction:\n" .. table.concat(context_lines(), "\n"))
  vim.api.nvim_win_set_cursor(ctx._view.win, { ai, 0 })
  local mark = #notes + 1
  vim.api.nvim_feedkeys("R", "x", false)
  wait_note("history restored %(" .. map.messages .. " messages%)", "R restores", mark)
  eq(rpc("vtcode/history", { sessionId = sid, limit = 1 }).total, map.messages, "the history before the compaction")
  vim.api.nvim_feedkeys("q", "x", false)
  wait(5000, function()
    return not (ctx._view.win and vim.api.nvim_win_is_valid(ctx._view.win))
  end, "q closes the float")
end)

test(":VtCompact! previews in a scratch buffer; :w applies the edited summary", function()
  rpc("vtcode/appendMessages", { sessionId = sid, messages = agent_session(12, "pv") })
  local total = rpc("vtcode/history", { sessionId = sid, limit = 1 }).total
  local arts = #rpc("vtcode/listArtifacts", { sessionId = sid })
  local mark = #notes + 1
  vim.cmd("VtCompact!")
  wait_note("compaction preview · " .. total .. " → %d+ messages", "the preview", mark)
  local buf = vim.api.nvim_get_current_buf()
  assert(ctx._pending[buf], "the current buffer holds the preview")
  eq(vim.bo[buf].buftype, "acwrite", "buftype")
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  assert(table.concat(lines, "\n"):find("\n## Goal\n", 1, true), table.concat(lines, "\n"))
  eq(rpc("vtcode/history", { sessionId = sid, limit = 1 }).total, total, "the preview changed nothing")
  eq(#rpc("vtcode/listArtifacts", { sessionId = sid }), arts, "no artifact")
  vim.api.nvim_buf_set_lines(buf, 0, 0, false, { "## Edited in Neovim" })
  mark = #notes + 1
  vim.cmd("write")
  wait_note("^Context compacted with the edited summary", ":w", mark)
  local h = rpc("vtcode/history", { sessionId = sid, limit = 1 })
  eq(h.messages[1].content, ctx.SUMMARY_PREFIX .. table.concat(lines, "\n", 1, #lines):gsub("^", "## Edited in Neovim\n"):gsub("%s+$", ""), "the committed summary")
  eq(#rpc("vtcode/listArtifacts", { sessionId = sid }), arts + 1, "an artifact")
  wait(5000, function()
    return not vim.api.nvim_buf_is_valid(buf)
  end, "the preview buffer is wiped")
end)

test(":VtCompact! on a history that moved on refuses :w; :q discards a preview", function()
  rpc("vtcode/appendMessages", { sessionId = sid, messages = agent_session(12, "pv2") })
  local mark = #notes + 1
  vim.cmd("VtCompact!")
  wait_note("compaction preview · ", "the preview", mark)
  local buf = vim.api.nvim_get_current_buf()
  rpc("vtcode/appendMessages", { sessionId = sid, messages = { { role = "user", content = "one more" } } })
  local total = rpc("vtcode/history", { sessionId = sid, limit = 1 }).total
  mark = #notes + 1
  vim.cmd("write")
  wait_note("history changed since the preview; nothing was compacted", "stale :w", mark)
  eq(rpc("vtcode/history", { sessionId = sid, limit = 1 }).total, total, "unchanged")
  wait(5000, function()
    return not vim.api.nvim_buf_is_valid(buf)
  end, "the stale preview buffer is wiped")
  local arts = #rpc("vtcode/listArtifacts", { sessionId = sid })
  mark = #notes + 1
  vim.cmd("VtCompact!")
  wait_note("compaction preview · ", "the preview", mark)
  buf = vim.api.nvim_get_current_buf()
  mark = #notes + 1
  vim.cmd("quit")
  wait_note("compaction preview discarded; the history is unchanged", ":q", mark)
  eq(vim.api.nvim_buf_is_valid(buf), false, "wiped")
  eq(#rpc("vtcode/listArtifacts", { sessionId = sid }), arts, "no artifact")
  eq(rpc("vtcode/history", { sessionId = sid, limit = 1 }).total, total, "unchanged")
end)

test(":VtCompact on a compact history reports it (a result, not an error)", function()
  local o = rpc("vtcode/openSession", { contextWindow = 32000 })
  rpc("vtcode/appendMessages", { sessionId = o.sessionId, messages = { { role = "user", content = "Fix TestHandler." } } })
  vim.cmd("VtSession " .. o.sessionId)
  wait(10000, function()
    return vt.active_session() == o.sessionId
  end, "pinned")
  local last = vt._state.last_compaction
  local done, res
  vt.compact(nil, function(err, r)
    done, res = true, r
    assert(not err, vim.inspect(err))
  end)
  wait(10000, function()
    return done
  end, ":VtCompact")
  eq(res.mode, "none", "mode")
  eq(res.message, "Conversation is already compact.", "message")
  wait_note("^Conversation is already compact%.$", "the notification")
  eq(vt._state.last_compaction, last, "not recorded as a compaction")
  local mark = #notes + 1
  vim.cmd("VtCompact!")
  wait_note("Nothing to preview: Conversation is already compact%.", ":VtCompact!", mark)
  vim.cmd("VtSession auto")
end)

test("prepareRequest through client() answers whole projections while deltas cross the wire", function()
  local d = require("vtcode.delta")
  local function send(c, method, params)
    local done, e, r = false, nil, nil
    local handler = function(err, res)
      done, e, r = true, err, res
    end
    if vim.fn.has("nvim-0.11") == 1 then
      c:request(method, params, handler, 0)
    else
      c.request(method, params, handler, 0)
    end
    wait(15000, function()
      return done
    end, method)
    assert(not e, method .. ": " .. vim.inspect(e))
    return r
  end
  local c = vt.client()
  local p1 = send(c, "vtcode/prepareRequest", { sessionId = sid, systemPrompt = "You are a coding agent." })
  assert(type(p1.revision) == "string", "revision")
  send(c, "vtcode/recordResponse", { sessionId = sid, message = { role = "assistant", content = "Looking at the lexer." } })
  local applied = d.applied
  local p2 = send(c, "vtcode/prepareRequest", {
    sessionId = sid, systemPrompt = "You are a coding agent.",
    messages = { { role = "user", content = "now the parser" } },
  })
  eq(d.applied, applied + 1, "a delta was applied")
  eq(p2.delta, nil, "callers see no delta")
  eq(#p2.messages, #p1.messages + 2, "the whole projection")
  eq(p2.messages[#p2.messages].content, "now the parser", "last message")
  eq(p2.messages[#p2.messages - 1].content, "Looking at the lexer.", "the response")
  -- The same projection as a client without a base gets in full.
  local raw = vim.lsp.get_client_by_id(c.id)
  local full = send(raw, "vtcode/prepareRequest", { sessionId = sid, systemPrompt = "You are a coding agent." })
  assert(type(full.messages) == "table" and full.delta == nil, "whole projection without baseRevision")
  eq(vim.json.encode(p2.messages), vim.json.encode(full.messages), "delta-applied projection == whole projection")
end)

test(":VtStats and :VtContext show the receipt: the provider's usage under the list price", function()
  local o = rpc("vtcode/openSession", { provider = "anthropic", model = "claude-sonnet-4-5", contextWindow = 200000 })
  rpc("vtcode/appendMessages", { sessionId = o.sessionId, messages = agent_session(2, "receipt") })
  rpc("vtcode/prepareRequest", { sessionId = o.sessionId, systemPrompt = "You are a coding agent." })
  rpc("vtcode/recordResponse", { sessionId = o.sessionId, message = { role = "assistant", content = "Done." },
    usage = { input_tokens = 1000, cache_read_input_tokens = 8000, cache_creation_input_tokens = 2000,
      cache_creation = { ephemeral_1h_input_tokens = 500 }, output_tokens = 300 } })
  vim.cmd("VtSession " .. o.sessionId)
  wait(10000, function()
    return vt.active_session() == o.sessionId
  end, "the receipt's session")
  local mark = #notes + 1
  vim.cmd("VtStats")
  local n = wait_note("Session " .. vim.pesc(o.sessionId), ":VtStats", mark)
  -- Claude Sonnet 4.5: 1000 × $3 + 8000 × $0.30 + 1500 × $3.75 + 500 × $6 + 300 × $15 per MTok = $0.0185
  assert(n.msg:find("tokens billed%s+1,000 in · 8,000 cache read · 2,000 cache write %(500 1h%) · 300 out"), n.msg)
  assert(n.msg:find("paid %(list prices of %d+%-%d+%-%d+%)%s+%$0%.02"), n.msg)
  assert(n.msg:find("without vtcode-ls (estimate)", 1, true), n.msg)
  local r = require("vtcode.receipt")
  eq(r.summary({ requests = 2, tokens = { input = 5, output = 1 }, unpriced = { "ollama/qwen3" } }),
    "2 requests · 5 in · 1 out · no list price for ollama/qwen3", "an unpriced receipt shows tokens only")
  local map = rpc("vtcode/contextMap", { sessionId = o.sessionId })
  assert(type(map.receipt) == "table", vim.inspect(map))
  local lines = require("vtcode.context").lines(map, 80)
  local text = table.concat(lines, "\n")
  assert(text:find("Receipt: 1 request · paid $0.02", 1, true), text)
  vim.cmd("VtSession " .. sid)
end)

test("vtcode.receipt: unused calls only when there are some, tokens only without a price", function()
  local r = require("vtcode.receipt")
  eq(r.unused({ requests = 1 }), nil, "no unused: no line")
  eq(r.unused({ requests = 1, unused = { calls = 0, tokens = {} } }), nil, "no unused calls: no line")
  local unpriced = { requests = 1, tokens = { input = 35000, output = 1100 }, unpriced = { "ollama/qwen3" },
    unused = { calls = 2, tokens = { input = 34000, output = 1000 } },
    compactions = { { trigger = "manual", mode = "local", originalTokens = 30000, compactedTokens = 2000, calls = 1,
      tokens = { input = 1000, output = 100 } } } }
  eq(r.unused(unpriced), "2 calls · 34,000 in · 1,000 out", "unpriced unused calls: tokens, no price")
  local rows = {}
  for _, row in ipairs(r.rows(unpriced)) do
    rows[row[1]] = row[2]
  end
  eq(rows["unused summarizer calls"], "2 calls · 34,000 in · 1,000 out", "the unused row, unpriced")
  eq(rows["compactions billed"], "1 · 1 call", "the compactions row, unpriced")
  eq(rows["  compaction 1 (manual, local)"], "30,000 -> 2,000 tokens · 1 call · 1,000 in · 100 out", "a compaction, unpriced")
  eq(r.calls(0, { input = 10, output = 2 }, 0.5), "10 in · 2 out · $0.50", "an older log's compaction: no count")
  local many = { requests = 1, tokens = {}, compactions = {} }
  for i = 1, 7 do
    many.compactions[i] = { trigger = "auto", mode = "local", originalTokens = i, compactedTokens = 1, calls = 2, tokens = {}, usd = 0.01 }
  end
  local labels = vim.tbl_map(function(row)
    return row[1]
  end, r.rows(many))
  assert(not vim.tbl_contains(labels, "  compaction 2 (auto, local)"), vim.inspect(labels))
  assert(vim.tbl_contains(labels, "  compaction 3 (auto, local)") and vim.tbl_contains(labels, "  compaction 7 (auto, local)"), vim.inspect(labels))
  for _, row in ipairs(r.rows(many)) do
    if row[1] == "compactions billed" then
      eq(row[2], "7 · 14 calls · $0.07", "the total covers every compaction")
    end
  end
end)

test(":VtStats and :VtContext show per compaction its calls and the unused summarizer calls", function()
  -- the later tests follow the first session: give it back even when this one fails
  local ok, err = xpcall(function()
    local o = rpc("vtcode/openSession", { provider = "anthropic", model = "claude-sonnet-4-5", contextWindow = 200000 })
    local s = o.sessionId
    rpc("vtcode/appendMessages", { sessionId = s, messages = agent_session(12, "bills") })
    local seen = #upstream.requests
    -- preview A, replaced by preview B, which is applied; preview C is never applied
    upstream.replies = {
      { input = 30000, output = 900 },
      { input = 2000, cacheRead = 7000, cacheWrite1h = 500, output = 350 },
      { input = 4000, output = 100 },
    }
    rpc("vtcode/compact", { sessionId = s, preview = true })
    local b = rpc("vtcode/compact", { sessionId = s, preview = true })
    assert(b.previewId ~= "", vim.inspect(b))
    rpc("vtcode/compact", { sessionId = s, previewId = b.previewId })
    rpc("vtcode/appendMessages", { sessionId = s, messages = agent_session(12, "bills2") })
    rpc("vtcode/compact", { sessionId = s, preview = true })
    eq(#upstream.requests - seen, 3, "the summarizer calls the fake upstream answered")
    assert(upstream.requests[seen + 1].line:find("^POST /v1/messages "), upstream.requests[seen + 1].line)
    eq(#upstream.replies, 0, "every scripted answer was used")

    vim.cmd("VtSession " .. s)
    wait(10000, function()
      return vt.active_session() == s
    end, "the session with bills")
    local mark = #notes + 1
    vim.cmd("VtStats")
    local n = wait_note("Session " .. vim.pesc(s), ":VtStats", mark)
    -- Claude Sonnet 4.5 list prices ($3 in, $0.30 cache read, $6 1-hour cache write, $15 out per MTok):
    -- A + C = 34,000 in + 1,000 out = $0.117; B = $0.006 + $0.0021 + $0.003 + $0.00525 = $0.01635
    emit("    " .. n.msg:sub(n.msg:find("requests billed", 1, true) or 1):gsub("\n", "\n    "))
    assert(n.msg:find("\nunused summarizer calls%s+2 calls · 34,000 in · 1,000 out · %$0%.12$"), n.msg)
    assert(n.msg:find("\ncompactions billed%s+1 · 1 call · %$0%.02\n"), n.msg)
    assert(n.msg:find("\n  compaction 1 %(manual, [%w-]+%)%s+[%d,]+ %-> [%d,]+ tokens · 1 call · 2,000 in · 7,000 cache read · 500 cache write %(500 1h%) · 350 out · %$0%.02\n"), n.msg)
    local map = rpc("vtcode/contextMap", { sessionId = s })
    local text = table.concat(require("vtcode.context").lines(map, 80), "\n")
    assert(text:find("\nUnused summarizer calls: 2 calls · 34,000 in · 1,000 out · $0.12\n", 1, true), text)
  end, debug.traceback)
  vim.cmd("VtSession " .. sid)
  assert(ok, err)
end)

test("ask mode: a proposal is a message naming :VtCompact!; :VtDecline says not now", function()
  local o = rpc("vtcode/openSession", { contextWindow = 16000 })
  rpc("vtcode/setPolicy", { sessionId = o.sessionId, policy = { autoCompaction = { mode = "ask" },
    toolResultClearing = { enabled = false }, context = { tokenizer = "approx" } } })
  local msgs = {}
  for i = 1, 11 do
    table.insert(msgs, { role = "user", content = "Step " .. i .. ": " .. string.rep("The module handles request routing and retries. ", 36) })
    table.insert(msgs, { role = "assistant", content = "Module " .. i .. ": " .. string.rep("It retries failed calls with backoff. ", 45) })
  end
  local mark = #notes + 1
  local prep = rpc("vtcode/prepareRequest", { sessionId = o.sessionId, messages = msgs })
  eq(prep.compaction, nil, "no compaction past the threshold in ask mode")
  local n = wait_note("Compact it%?", "the proposal", mark)
  assert(n.msg:find(":VtCompact! to review", 1, true) and n.msg:find(o.sessionId, 1, true), n.msg)
  mark = #notes + 1
  vim.cmd("VtDecline")
  n = wait_note("not now", ":VtDecline", mark)
  assert(n.msg:find(o.sessionId, 1, true), n.msg)
end)

test("the shared daemon killed: one message, the client reconnects and reopens its sessions; the agent and the statusline go on", function()
  local st = vim.fn.json_decode(vim.fn.system({ bin, "status", "--json" }))
  assert(vim.v.shell_error == 0 and type(st) == "table" and st.pid, "vtcode-ls status --json")
  local old = vt._state.client_id
  eq(vt.active_session(), sid, "the session the statusline follows")
  local total = rpc("vtcode/history", { sessionId = sid, limit = 1 }).total
  local mark = #notes + 1
  eq((vim.uv or vim.loop).kill(st.pid, 9), 0, "kill -9 " .. st.pid)
  wait_note("connection to vtcode%-ls was lost", "the reconnect message", mark)
  wait(15000, function()
    return vt._state.initialized and vt._state.client_id ~= nil and vt._state.client_id ~= old
  end, "the new client")
  -- the agent's next request, at once, without opening its session: held until the plugin reopened it
  local r = rpc("vtcode/appendMessages", { sessionId = sid, messages = { { role = "user", content = "go on after the daemon restarted" } } })
  eq(r.messages, total + 1, "the session went on where it was")
  wait(10000, function()
    return vt.active_session() == sid and percent(vt.statusline()) ~= nil
  end, "the statusline showing the session again (" .. vt.statusline() .. ")")
  local ours = {}
  for i = mark, #notes do
    if notes[i].msg:find("^vtcode: ") then
      table.insert(ours, notes[i].msg)
    end
  end
  eq(#ours, 1, "the plugin's messages " .. vim.inspect(ours))
  emit("    " .. ours[1] .. " · " .. vt.statusline())
  local st2 = vim.fn.json_decode(vim.fn.system({ bin, "status", "--json" }))
  assert(type(st2) == "table" and st2.pid ~= st.pid and st2.clients == 1, "a new daemon with this client: " .. vim.inspect(st2))
end)

test("vtcode.reopen: a session the daemon refuses is dropped, one the connection lost is kept, requests wait for the reopen", function()
  local ro = dofile(vim.api.nvim_get_runtime_file("lua/vtcode/reopen.lua", false)[1]) -- a fresh record
  local sent = {}
  local fake = { request = function(method, params, handler)
    table.insert(sent, method .. " " .. tostring(params.sessionId))
    handler(nil, { sessionId = params.sessionId or "new" })
    return true, #sent
  end }
  local plain = function(c, name, ...)
    return c[name](...)
  end
  local w = ro.wrap(fake, plain)
  for _, id in ipairs({ "s-1", "s-2", "s-3", "s-4" }) do
    w.request("vtcode/openSession", { sessionId = id, model = "m" }, function() end)
  end
  w.request("vtcode/closeSession", { sessionId = "s-4" }, function() end)
  eq(ro.ids(), { "s-1", "s-2", "s-3" }, "the open sessions")
  local pending, result = {}, nil
  ro.reopen(function(method, params, cb)
    table.insert(pending, { params = params, cb = cb })
    return true
  end, function(r)
    result = r
  end)
  local answered = false
  w.request("vtcode/history", { sessionId = "s-1" }, function()
    answered = true
  end)
  eq(#sent, 5, "the agent's request is held while the sessions are reopened")
  eq(pending[1].params, { sessionId = "s-1", model = "m" }, "reopened by id with its route")
  pending[1].cb(nil, { sessionId = "s-1" })
  pending[2].cb({ code = -32004, message = "session s-2 is busy" }, nil)
  pending[3].cb({ code = -32097, message = "connection closed" }, nil)
  eq(result.reopened, { "s-1" }, "reopened")
  eq(result.failed[1].sessionId, "s-2", "refused")
  eq(result.lost, { "s-3" }, "lost")
  eq(ro.ids(), { "s-1", "s-3" }, "the refused session dropped, the lost one kept")
  eq(answered, true, "the held request went out after the reopen")
end)

test(":checkhealth vtcode passes", function()
  vim.cmd("checkhealth vtcode")
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  local text = table.concat(lines, "\n")
  local oks = select(2, text:gsub("OK", ""))
  assert(not text:find("ERROR"), text)
  assert(oks >= 3, "at least 3 OK lines:\n" .. text)
  assert(text:find("found"), text)
  assert(text:find("client %d+ running"), text)
  emit("    " .. table.concat(vim.tbl_filter(function(l)
    return l:find("OK")
  end, lines), "\n    "))
end)

test("no deprecated Neovim API is used", function()
  if next(deprecations) then
    local lines = {}
    for key, where in pairs(deprecations) do
      table.insert(lines, key .. "\n      " .. where:gsub("\n", "\n      "))
    end
    error("deprecated API used:\n  " .. table.concat(lines, "\n  "))
  end
  if vim.fn.has("nvim-0.11") == 1 then
    -- Neovim's own record of deprecated calls (nvim 0.11+)
    vim.cmd("checkhealth vim.deprecated")
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    assert(text:find("No deprecated functions detected", 1, true), text)
  end
end)

emit(string.format("nvim %s: %d passed, %d failed", nvim, passed, failed))
if out then
  out:close()
end
vt.stop()
vim.wait(2000, function()
  return vt.client() == nil
end, 20)
vim.cmd(failed == 0 and "qa!" or "cq")
