-- vtcode user commands; the client starts with require("vtcode").setup() (or the first command).
if vim.g.loaded_vtcode then
  return
end
vim.g.loaded_vtcode = true

local function cmd(name, fn, opts)
  vim.api.nvim_create_user_command(name, fn, opts)
end

cmd("VtCompact", function(o)
  if o.bang then
    require("vtcode.context").preview(o.args)
  else
    require("vtcode").compact(o.args)
  end
end, { nargs = "*", bang = true, desc = "vtcode: compact the active session's context [instructions]; ! previews (:w applies, :q discards)" })

cmd("VtContext", function()
  require("vtcode.context").show()
end, { nargs = 0, desc = "vtcode: the context map of the active session in a floating window" })

cmd("VtDecline", function()
  require("vtcode").decline()
end, { nargs = 0, desc = "vtcode: not now to the compaction proposal (ask mode)" })

cmd("VtStats", function()
  require("vtcode").stats()
end, { nargs = 0, desc = "vtcode: show projection stats of the active session" })

cmd("VtPolicy", function(o)
  require("vtcode").policy(o.fargs, o.bang)
end, {
  nargs = "*",
  bang = true,
  desc = "vtcode: set policy keys (key=value…); ! = workspace default",
  complete = function(arg)
    local keys = {
      "autoCompaction.enabled=", "autoCompaction.thresholdTokens=", "autoCompaction.thresholdRatio=",
      "autoCompaction.compactOnModelSwitch=", "toolResultClearing.enabled=", "toolResultClearing.triggerTokens=",
      "toolResultClearing.keepToolUses=", "toolResultClearing.keepRecentToolBatches=",
      "toolResultClearing.clearToolInputs=", "context.maxContextTokens=", "context.reservedOutputTokens=",
      "context.trimToPercent=", "context.preserveRecentTurns=", "context.tokenizer=", "routePolicy.thresholdRatio=",
      "routePolicy.retainRatio=", "routePolicy.maxOverflowRetries=",
    }
    return vim.tbl_filter(function(k)
      return k:sub(1, #arg) == arg
    end, keys)
  end,
})

cmd("VtRestore", function(o)
  require("vtcode").restore(o.args)
end, { nargs = "?", desc = "vtcode: restore the history saved before a compaction" })

cmd("VtSession", function(o)
  require("vtcode").session(o.args)
end, { nargs = "?", desc = "vtcode: pick the active session (or 'auto')" })
