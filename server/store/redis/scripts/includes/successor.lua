-- successor: the waiter a transfer (transfer.lua) names: the first plain waiter in queue order when
-- toSession is '', else the first waiter of session toSession (and of owner toOwner unless that is '').
-- Expects in scope: rcall, and waiterRecord (waiter-record.lua)
-- Defines: successor(lock, waiterCount, toSession, toOwner); returns {waiter, coordinator, in set, hold
--   mode, holder, lock-delay} (waiterRecord's) or nil, and the first 10 passed over as {holder, waiter, ...}
--- @include "waiter-record"
local function successor(lock, waiterCount, toSession, toOwner)
  local waiting = {}
  for _, waiter in ipairs(waiterCount > 0 and rcall('ZRANGE', lock.queue, 0, -1) or {}) do
    local waiterCoord, inSet, holdMode, _, holder, lockDelay = waiterRecord(lock, waiter)
    if toSession == '' and not inSet or string.match(waiter, '^[^:]*') == toSession
      and (toOwner == '' or holder == toSession .. ':' .. toOwner) then
      return {waiter, waiterCoord, inSet, holdMode, holder, lockDelay}, waiting
    end
    if #waiting < 20 then
      waiting[#waiting + 1], waiting[#waiting + 2] = holder, waiter
    end
  end
  return nil, waiting
end
