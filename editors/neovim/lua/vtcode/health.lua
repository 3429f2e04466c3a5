-- :checkhealth vtcode — the daemon binary and its version, the client, the Neovim version.
local M = {}

local health = vim.health or require("health")
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local error = health.error or health.report_error
local info = health.info or health.report_info

function M.check()
  local vtcode = require("vtcode")
  local st = vtcode._state

  start("vtcode: Neovim")
  local v = vim.version()
  local version = string.format("%d.%d.%d", v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.7") == 1 then
    ok("Neovim " .. version .. " (0.7 or newer)")
  else
    error("Neovim " .. version .. " is too old: vtcode needs 0.7 or newer")
  end
  if vim.lsp.start then
    info("client started with vim.lsp.start; progress from the LspProgress event")
  else
    info("client started with vim.lsp.start_client; progress from the wrapped $/progress handler")
  end

  start("vtcode: daemon")
  local cmd = st.config.cmd
  if type(cmd) == "string" then
    cmd = { cmd }
  end
  local bin = cmd and cmd[1]
  if not bin or vim.fn.executable(bin) ~= 1 then
    error("daemon not found: " .. tostring(bin), {
      "install vtcode-ls on PATH, or pass its path: require('vtcode').setup({ cmd = { '/path/to/vtcode-ls' } })",
    })
  else
    local path = vim.fn.exepath(bin)
    local out = vim.fn.system({ bin, "version" })
    local first = (out or ""):gsub("\n.*", "")
    if vim.v.shell_error == 0 and first ~= "" then
      ok(string.format("%s found (%s): %s", bin, path, first))
    else
      error(string.format("%s found (%s) but `%s version` failed: %s", bin, path, bin, first))
    end
  end

  start("vtcode: client")
  if not st.setup_done then
    warn("setup() has not been called; the first :Vt command starts the client with the defaults", {
      "call require('vtcode').setup({ cmd = { 'vtcode-ls' } }) in your config",
    })
    return
  end
  local client = vtcode.client()
  if client and st.initialized then
    local si = st.server_info or {}
    ok(string.format("client %d running (%s %s), workspace %s", client.id, tostring(si.name or "vtcode-ls"),
      tostring(si.version or ""), tostring(st.root)))
    local id = vtcode.active_session()
    if id then
      info("active session: " .. id .. (st.pinned and " (selected)" or "") .. " · " .. vtcode.statusline())
    else
      info("no active session yet")
    end
  elseif client then
    warn("client " .. client.id .. " is starting")
  else
    error("the client is not running", { "see :LspLog; restart with :lua require('vtcode').start()" })
  end
end

return M
