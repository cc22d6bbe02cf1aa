-- grant: makes holder h hold the lock until `deadline` with a new fencing token, and publishes it as
-- 'acquired'. The token exceeds the floor F of `floors` "F V" (the Sentinel master's epoch); the fencing
-- counter is kept `retain` ms past the lease.
-- Expects in scope: rcall, holders, data, fence (keys), retain, floors (ARGV), now, event (included)
-- Defines: grant(h, waiter, mode, deadline, fields): sets h's record "token 1 mode waiter" and grant time,
--   'excl' for an exclusive hold, and the extra data-hash fields in `fields`; returns the token as text.
--   Also fenceFloor, and what event.lua defines
--- @include "event"
local fenceFloor = tonumber(string.match(floors, '^(%d+) %d+$'))
local function grant(h, waiter, mode, deadline, fields)
  local token = rcall('INCR', fence)
  if token <= fenceFloor then
    token = rcall('INCRBY', fence, string.format('%.0f', fenceFloor - token + 1))
  end
  token = string.format('%.0f', token)
  rcall('PEXPIRE', fence, math.max(0, deadline - now) + retain)
  rcall('ZADD', holders, deadline, h)
  table.insert(fields, 'h:' .. h)
  table.insert(fields, token .. ' 1 ' .. mode .. ' ' .. waiter)
  table.insert(fields, 'a:' .. h)
  table.insert(fields, now)
  if mode == '1' then
    table.insert(fields, 'excl')
    table.insert(fields, '1')
  end
  rcall('HSET', data, unpack(fields))
  event('acquired', h, deadline - now)
  return token
end
