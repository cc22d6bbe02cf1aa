-- purge: drops the holders and waiters whose lease has ended, publishing each holder's end as 'expired'; a
-- holder with a lock-delay delays the lock from its lease's end, and an ended delay is lifted (delay.lua).
-- Each set is read once, its PEEK lowest scores (the ended ones come first): that read also counts it, so a
-- lock with fewer members costs one call per set, not a count and a range (docs/data-model.md).
-- Expects in scope: rcall, holders, data, queue, leases (keys), now, event (included)
-- Defines: n, the live holders left (a delay in force counts as one); waiting, the live waiters left (both
--   counted, not re-read); also what event.lua, holder-fields.lua and delay-expiry.lua define
--- @include "event"
--- @include "holder-fields"
--- @include "delay-expiry"
local PEEK = 16
-- The members of `key` whose score has passed (name, score, ...) and how many it had: one call when it has
-- fewer than PEEK; else a count too, and a range as well when all PEEK read have passed.
local function ended(key)
  local low = rcall('ZRANGE', key, 0, PEEK - 1, 'WITHSCORES')
  local past = 0
  while past < #low and tonumber(low[past + 2]) <= now do
    past = past + 2
  end
  if #low < 2 * PEEK then
    return {unpack(low, 1, past)}, #low / 2
  elseif past < #low then
    return {unpack(low, 1, past)}, rcall('ZCARD', key)
  end
  return rcall('ZRANGEBYSCORE', key, '-inf', now, 'WITHSCORES'), rcall('ZCARD', key)
end
local gone, n = ended(holders)
for i = 1, #gone, 2 do
  local h = gone[i]
  if h ~= DELAY then
    rcall('ZREM', holders, h)
    n = n - 1
    event('expired', h, 0)
    n = n + holdOff(rcall('HGET', data, 'd:' .. h), gone[i + 1])
    rcall('HDEL', data, unpack(holderFields(h)))
  elseif not delayEnd then
    -- Unless a holder purged just now delayed the lock again (holdOff moved the member's end).
    n = n - rcall('ZREM', holders, DELAY)
    lift()
  end
end
-- Every queue member has a lease and every lease is queued (each script adds and removes both together).
local lapsed, waiting = ended(leases)
for i = 1, #lapsed, 2 do
  local w = lapsed[i]
  rcall('ZREM', leases, w)
  waiting = waiting - rcall('ZREM', queue, w)
  rcall('HDEL', data, 'w:' .. w, 'q:' .. w, 'y:' .. w, 's:' .. w)
end
