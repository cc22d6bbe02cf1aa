-- set-name: acquire-set.lua's step from one name of the set to the next: the script's key and channel
-- locals point at name i's, purged() purges it as acquire.lua does before it decides, and join() queues the
-- set's member entry on it.
-- Expects in scope: rcall, the locals holders, data, queue, leases, fence, ver, chan (assigned here), hid,
--   wid, coord, owner, value, names, publish (ARGV), KEYS (6 per name), ARGV (after the 11th: mode, limit,
--   event channel per name)
-- Defines: use(i): switches to name i (its lock-delay as yet unseen) and returns its mode and limit;
--   purged(): purges the current name (purge.lua), deletes its idle hash or stale 'excl', lets a lock left
--   with only a lock-delay expire (delay-expiry.lua), returns n, its live holders; join(mode, limit): a
--   set-member entry ("w:" mode 3 or 4, "s:" the names, "sets") at the end of the current name's queue.
--   Also what fits.lua, grant.lua, holder-fields.lua and delay-expiry.lua define
--- @include "fits"
--- @include "grant"
--- @include "holder-fields"
--- @include "delay-expiry"
local function use(i)
  holders, data, queue, leases, fence, ver = unpack(KEYS, i * 6 - 5, i * 6)
  chan, loud, delayEnd = ARGV[11 + i * 3], publish ~= 'watched' or nil, nil
  return ARGV[9 + i * 3], ARGV[10 + i * 3]
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
  keep()
end
