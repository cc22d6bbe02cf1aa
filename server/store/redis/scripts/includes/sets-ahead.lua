-- sets-ahead: the queue rule of acquire-sets (docs/multi-lock.md). A set member's queue entry (its "w:"
-- record's mode digit is 3, exclusive, or 4, shared) never blocks anyone: only plain waiters ahead do.
-- Expects in scope: rcall
-- Defines: setsAhead(lock, waiter), true when every waiter queued ahead of waiter (every waiter, when it is
--   not queued) is a set member; reads one "w:" record per waiter ahead, up to the first plain one
local function setsAhead(lock, waiter)
  for _, queued in ipairs(rcall('ZRANGE', lock.queue, 0, -1)) do
    if queued == waiter then
      return true
    end
    if not string.match(rcall('HGET', lock.data, 'w:' .. queued), '^%S+ [34]') then
      return false
    end
  end
  return true
end
