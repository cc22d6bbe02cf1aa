-- purge: drops the holders and waiters whose lease has ended, publishing each holder's end as 'expired'.
-- Expects in scope: rcall, holders, data, queue, leases (keys), now, event (included)
-- Defines: n, the live holders left; waiting, the live waiters left (both counted, not re-read); also what
--   event.lua and holder-fields.lua define
--- @include "event"
--- @include "holder-fields"
local n = rcall('ZCARD', holders)
if n > 0 then
  for _, h in ipairs(rcall('ZRANGEBYSCORE', holders, '-inf', now)) do
    rcall('ZREM', holders, h)
    n = n - 1
    event('expired', h, 0)
    rcall('HDEL', data, unpack(holderFields(h)))
  end
end
-- Every leases member is queued (each script adds and removes both together), so no queue, no leases.
local waiting = rcall('ZCARD', queue)
if waiting > 0 then
  for _, w in ipairs(rcall('ZRANGEBYSCORE', leases, '-inf', now)) do
    rcall('ZREM', leases, w)
    waiting = waiting - rcall('ZREM', queue, w)
    rcall('HDEL', data, 'w:' .. w, 'q:' .. w, 's:' .. w)
  end
end
