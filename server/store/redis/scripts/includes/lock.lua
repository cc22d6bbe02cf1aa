-- lock: one lock as every include function takes it (its first argument): its keys, its event channel,
-- and what this run has learnt of it so far. No include keeps a lock's state in a variable of its own.
-- Expects in scope: publish (ARGV: 'watched' or 'always', event.lua)
-- Defines: lockOf(keys, first, events): the lock whose six keys are keys[first] to keys[first + 5] (holders,
--   data, queue, leases, fence, version: docs/data-model.md) and whose event channel is events; a table of
--   those, events, loud (publish decided: true, false, or nil until event.lua asks NUMSUB) and delayEnd
--   (the end of the lock-delay in force as far as this run has seen, or nil: delay.lua)
local function lockOf(keys, first, events)
  local holders, data, queue, leases, fence, version = unpack(keys, first, first + 5)
  return {
    holders = holders,
    data = data,
    queue = queue,
    leases = leases,
    fence = fence,
    version = version,
    events = events,
    loud = publish ~= 'watched' or nil,
  }
end
