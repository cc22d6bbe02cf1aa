-- purge: drops the holders and waiters whose lease has ended, publishing each holder's end as 'expired'; a
-- holder with a lock-delay delays the lock from its lease's end, and an ended delay is lifted (delay.lua).
-- Each set is read once, its PEEK lowest scores (the ended ones come first): that read also counts it, so a
-- lock with fewer members costs one call per set, not a count and a range (docs/data-model.md).
-- Expects in scope: rcall, now
-- Defines: purge(lock); returns the live holders and waiters left (counted; a delay in force is a holder)
--   and the first holder lease's end if it removed none (0: none). Also event, holder-fields, delay-expiry's
--- @include "event"
--- @include "holder-fields"
--- @include "delay-expiry"
local PEEK = 16
-- The members of `key` whose score has passed (name, score, ...), how many it had and its lowest score (none
-- when all PEEK read have passed): one call when it has fewer than PEEK; else a count too, and then a range.
local function ended(key)
  local lowest = rcall('ZRANGE', key, 0, PEEK - 1, 'WITHSCORES')
  local past = 0
  while past < #lowest and tonumber(lowest[past + 2]) <= now do
    past = past + 2
  end
  if #lowest < 2 * PEEK then
    return {unpack(lowest, 1, past)}, #lowest / 2, lowest[2]
  elseif past < #lowest then
    return {unpack(lowest, 1, past)}, rcall('ZCARD', key), lowest[2]
  end
  return rcall('ZRANGEBYSCORE', key, '-inf', now, 'WITHSCORES'), rcall('ZCARD', key)
end
local function purge(lock)
  local gone, holderCount, first = ended(lock.holders)
  for at = 1, #gone, 2 do
    local holder = gone[at]
    if holder ~= DELAY then
      rcall('ZREM', lock.holders, holder)
      event(lock, 'expired', holder, 0)
      holderCount = holderCount - 1 + holdOff(lock, rcall('HGET', lock.data, 'd:' .. holder), gone[at + 1])
      rcall('HDEL', lock.data, unpack(holderFields(holder)))
    elseif not lock.delayEnd then
      -- Unless a holder purged just now delayed the lock again (holdOff moved the member's end).
      holderCount = holderCount - rcall('ZREM', lock.holders, DELAY)
      lift(lock)
    end
  end
  -- Every queue member has a lease and every lease is queued (each script adds and removes both together).
  local lapsed, waiterCount = ended(lock.leases)
  for at = 1, #lapsed, 2 do
    rcall('ZREM', lock.leases, lapsed[at])
    waiterCount = waiterCount - rcall('ZREM', lock.queue, lapsed[at])
    rcall('HDEL', lock.data, 'w:' .. lapsed[at], 'q:' .. lapsed[at], 'y:' .. lapsed[at], 's:' .. lapsed[at])
  end
  return holderCount, waiterCount, #gone == 0 and tonumber(first or 0) or nil
end
