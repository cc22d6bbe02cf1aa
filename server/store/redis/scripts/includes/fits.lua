-- fits: the grant rule. A claim fits when nobody holds the lock, or when it is shared, nobody holds it
-- exclusively and the holders are fewer than its limit (0: no limit). Nobody jumps the queue but past
-- acquire-set members (sets-ahead.lua): acquire.lua grants only when nobody else waits, hand-on.lua only to
-- the head waiter. Its twin is MemoryLock.fits (server/store/memory/memory-lock.ts): change both together.
-- Expects in scope: rcall
-- Defines: fits(lock, mode, limit, holderCount) for a claim of mode '1' (exclusive) or '2' (shared) and
--   limit (decimal text) beside holderCount holders; true or false, and reads the data hash only when there
--   is a holder. Also what sets-ahead.lua defines
--- @include "sets-ahead"
local function fits(lock, mode, limit, holderCount)
  if holderCount == 0 then
    return true
  end
  local sharedOnly = mode == '2' and rcall('HEXISTS', lock.data, 'excl') == 0
  return sharedOnly and (limit == '0' or holderCount < tonumber(limit))
end
