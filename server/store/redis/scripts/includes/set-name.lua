-- set-name: acquire-set.lua's step from one name of the set to the next: the script's key and channel
-- locals point at name i's, purged() purges it as acquire.lua does before it decides, join() queues the
-- set's member entry on it and take() grants it to the set.
-- Expects in scope: rcall, the locals holders, data, queue, leases, fence, ver, chan (assigned here), hid,
--   wid, coord, owner, value, names, publish, ttl (ARGV), now, KEYS (6 per name), ARGV (after the 11th: mode,
--   limit, event channel per name; after those, only when some name has one, a lock-delay ms per name)
-- Defines: use(i): switches to name i (the lock's delay in force as yet unseen) and returns its mode, limit
--   and the claim's lock-delay (nil: none); purged(): purges the current name (purge.lua), deletes its idle
--   hash or stale 'excl', lets a lock left with only a lock-delay expire (delay-expiry.lua), returns n, its
--   live holders; join(mode, limit): a set-member entry ("w:" mode 3 or 4, "s:" the names, "sets") at the
--   end of the current name's queue; take(mode, limit, delay): the set's entry leaves the current name's
--   queue and hid holds it (with the lock-delay as 'd:', as acquire.lua keeps it); returns the token.
--   Also what fits.lua, grant.lua, holder-fields.lua and delay-expiry.lua define
--- @include "fits"
--- @include "grant"
--- @include "holder-fields"
--- @include "delay-expiry"
local function use(i)
  holders, data, queue, leases, fence, ver = unpack(KEYS, i * 6 - 5, i * 6)
  chan, loud, delayEnd = ARGV[11 + i * 3], publish ~= 'watched' or nil, nil
  local delay = ARGV[11 + #KEYS / 2 + i]
  return ARGV[9 + i * 3], ARGV[10 + i * 3], delay ~= '0' and delay or nil
end
local function purged()
  --- @include "purge"
  if n + waiting == 0 then
    rcall('DEL', data)
  elseif n == 0 then
    rcall('HDEL', data, 'excl')
  end
  rest(n, waiting, rcall('HGET', data, 'delay'))
  return n
end
local function join(mode, limit)
  rcall('ZADD', queue, rcall('HINCRBY', data, 'seq', 1), wid)
  local w, v = coord .. ' ' .. (tonumber(mode) + 2) .. ' ' .. limit .. ' ' .. owner, 'v:' .. hid
  -- A shared claim sets the limit in force, as acquire.lua does.
  local more = mode == '2' and {'sets', 1, 'limit', limit} or {'sets', 1}
  rcall('HSET', data, 'w:' .. wid, w, 'q:' .. wid, now, 's:' .. wid, names, v, value, unpack(more))
  -- purged() may have let a lock left with only a lock-delay expire (rest): a waiter keeps it.
  rcall('PERSIST', holders)
  rcall('PERSIST', data)
end
local function take(mode, limit, delay)
  rcall('ZREM', queue, wid)
  rcall('ZREM', leases, wid)
  rcall('HDEL', data, 'w:' .. wid, 'q:' .. wid, 's:' .. wid)
  local held = mode == '2' and {'v:' .. hid, value, 'limit', limit} or {'v:' .. hid, value}
  return grant(hid, wid, mode, now + ttl, withDelay(held, 'd:' .. hid, delay))
end
