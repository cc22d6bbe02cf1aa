-- grant: makes a holder hold the lock until `deadline` with a new fencing token, and publishes it as
-- 'acquired'. The token exceeds the floor F of `floors` "F V" (the Sentinel master's epoch); the fencing
-- counter is kept `retain` ms past the lease.
-- Expects in scope: rcall, retain, floors (ARGV), now
-- Defines: grant(lock, holder, waiter, mode, deadline, fields, from): sets the holder's record "token 1 mode
--   waiter" and grant time, 'excl' for an exclusive hold, and the extra data-hash fields in the list
--   `fields`; with `from` (a transfer: event.lua) publishes 'transferred' from that holder instead; returns
--   the token as text. Also fenceFloor, and what event.lua defines
--- @include "event"
local fenceFloor = tonumber(string.match(floors, '^(%d+) %d+$'))
local function grant(lock, holder, waiter, mode, deadline, fields, from)
  local token = rcall('INCR', lock.fence)
  if token <= fenceFloor then
    token = rcall('INCRBY', lock.fence, string.format('%.0f', fenceFloor - token + 1))
  end
  token = string.format('%.0f', token)
  rcall('PEXPIRE', lock.fence, math.max(0, deadline - now) + retain)
  rcall('ZADD', lock.holders, deadline, holder)
  table.insert(fields, 'h:' .. holder)
  table.insert(fields, token .. ' 1 ' .. mode .. ' ' .. waiter)
  table.insert(fields, 'a:' .. holder)
  table.insert(fields, now)
  if mode == '1' then
    table.insert(fields, 'excl')
    table.insert(fields, '1')
  end
  rcall('HSET', lock.data, unpack(fields))
  event(lock, from and 'transferred' or 'acquired', holder, deadline - now, from)
  return token
end
