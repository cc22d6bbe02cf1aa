-- sets-ahead: the queue rule of acquire-sets (docs/multi-lock.md). A set member's queue entry (its "w:"
-- record's mode digit is 3, exclusive, or 4, shared) never blocks anyone: only plain waiters ahead do.
-- Expects in scope: rcall, data, queue (keys)
-- Defines: setsAhead(w), true when every waiter queued ahead of waiter w (every waiter, when w is not
--   queued) is a set member; reads one "w:" record per waiter ahead, up to the first plain one
local function setsAhead(w)
  for _, q in ipairs(rcall('ZRANGE', queue, 0, -1)) do
    if q == w then
      return true
    end
    if not string.match(rcall('HGET', data, 'w:' .. q), '^%S+ [34]') then
      return false
    end
  end
  return true
end
