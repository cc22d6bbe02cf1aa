-- purge: drops the holders and waiters whose lease has ended, publishing each holder's end as 'expired'; a
-- holder with a lock-delay delays the lock from its lease's end, and an ended delay is lifted (delay.lua).
-- Expects in scope: rcall, holders, data, queue, leases (keys), now, event (included)
-- Defines: n, the live holders left (a delay in force counts as one); waiting, the live waiters left (both
--   counted, not re-read); also what event.lua, holder-fields.lua and delay-expiry.lua define
--- @include "event"
--- @include "holder-fields"
--- @include "delay-expiry"
local n = rcall('ZCARD', holders)
if n > 0 then
  local ended = rcall('ZRANGEBYSCORE', holders, '-inf', now, 'WITHSCORES')
  for i = 1, #ended, 2 do
    local h = ended[i]
    if h ~= DELAY then
      rcall('ZREM', holders, h)
      n = n - 1
      event('expired', h, 0)
      n = n + holdOff(rcall('HGET', data, 'd:' .. h), ended[i + 1])
      rcall('HDEL', data, unpack(holderFields(h)))
    elseif not delayEnd then
      -- Unless a holder purged just now delayed the lock again (holdOff moved the member's end).
      n = n - rcall('ZREM', holders, DELAY)
      lift()
    end
  end
end
-- Every leases member is queued (each script adds and removes both together), so no queue, no leases.
local waiting = rcall('ZCARD', queue)
if waiting > 0 then
  for _, w in ipairs(rcall('ZRANGEBYSCORE', leases, '-inf', now)) do
    rcall('ZREM', leases, w)
    waiting = waiting - rcall('ZREM', queue, w)
    rcall('HDEL', data, 'w:' .. w, 'q:' .. w, 'y:' .. w, 's:' .. w)
  end
end
