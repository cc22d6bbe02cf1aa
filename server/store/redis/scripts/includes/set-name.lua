-- set-name: acquire-set.lua's step from one name of the set to the next: nameAt(index) gives that name's
-- lock, purged(lock) purges it as acquire.lua does before it decides, join(lock, ...) queues the set's
-- member entry on it and take(lock, ...) grants it to the set.
-- Expects in scope: rcall, hid, wid, coord, owner, value, names, ttl (ARGV), now, KEYS (6 per name), ARGV
--   (after the 11th: mode, limit, event channel per name; then, only when some name has one, a lock-delay
--   ms per name)
-- Defines: nameAt(index): name index's lock as this run first sees it (lock.lua), its mode, limit and the
--   claim's lock-delay (nil: none); purged(lock): purges the name (purge.lua), deletes its idle hash or stale
--   'excl', lets a lock left with only a lock-delay expire (delay-expiry.lua), returns its live holders;
--   join(lock, mode, limit): a set-member entry ("w:" mode 3 or 4, "s:" the names, "sets") at the end of the
--   name's queue; take(lock, mode, limit, lockDelay): the set's entry leaves the name's queue and hid holds
--   it (with the lock-delay as 'd:', as acquire.lua keeps it); returns the token. Also what lock.lua,
--   purge.lua, fits.lua and grant.lua define
--- @include "lock"
--- @include "purge"
--- @include "fits"
--- @include "grant"
local function nameAt(index)
  local lockDelay = ARGV[11 + #KEYS / 2 + index]
  local lock = lockOf(KEYS, index * 6 - 5, ARGV[11 + index * 3])
  return lock, ARGV[9 + index * 3], ARGV[10 + index * 3], lockDelay ~= '0' and lockDelay or nil
end
local function purged(lock)
  local holderCount, waiterCount = purge(lock)
  if holderCount + waiterCount == 0 then
    rcall('DEL', lock.data)
  elseif holderCount == 0 then
    rcall('HDEL', lock.data, 'excl')
  end
  rest(lock, holderCount, waiterCount, rcall('HGET', lock.data, 'delay'))
  return holderCount
end
local function join(lock, mode, limit)
  rcall('ZADD', lock.queue, rcall('HINCRBY', lock.data, 'seq', 1), wid)
  local entry = coord .. ' ' .. (tonumber(mode) + 2) .. ' ' .. limit .. ' ' .. owner
  -- A shared claim sets the limit in force, as acquire.lua does.
  local more = mode == '2' and {'sets', 1, 'limit', limit} or {'sets', 1}
  rcall('HSET', lock.data, 'w:' .. wid, entry, 'q:' .. wid, now, 's:' .. wid, names, 'v:' .. hid, value,
    unpack(more))
  -- purged() may have let a lock left with only a lock-delay expire (rest): a waiter keeps it.
  rcall('PERSIST', lock.holders)
  rcall('PERSIST', lock.data)
end
local function take(lock, mode, limit, lockDelay)
  rcall('ZREM', lock.queue, wid)
  rcall('ZREM', lock.leases, wid)
  rcall('HDEL', lock.data, 'w:' .. wid, 'q:' .. wid, 's:' .. wid)
  local held = mode == '2' and {'v:' .. hid, value, 'limit', limit} or {'v:' .. hid, value}
  return grant(lock, hid, wid, mode, now + ttl, withDelay(held, 'd:' .. hid, lockDelay))
end
