-- revoke: an operator takes one holder's hold away (every count of it) at once, then hands the lock on
-- (hand-on.lua), unless the hold's lock-delay now delays the lock (delay.lua). The holder's coordinator
-- learns it from the broadcast on the revocation channel ("session\nowner\ntoken\nname"); other
-- coordinators' grants are published on their grant channels;
-- holder changes (expired, revoked, acquired) are versioned and published by event.lua.
-- KEYS: 1 holders, 2 data, 3 queue, 4 leases, 5 fence, 6 version (layout: docs/data-model.md)
-- ARGV: session, owner, coordinator id, fence retain ms, lock name, grant channel prefix (as in release.lua),
--   event channel, publish, floors (as in acquire.lua), revocation channel
-- Returns {code, token, count, grants}; grants: {waiter, token, ...} to this coordinator's waiters (and
--   others' when prefix is '')
--   code 21 REVOKED (the revoked hold's token and count), 22 NOT_HELD (that session and owner
--   hold no live lease on the lock; token and count 0; an expired holder is still purged),
--   23 INVALID_SESSION (the session contains ':', so "session:owner" could name another session's
--   hold; nothing is read or changed; token and count 0)
local rcall = redis.call
local session, owner, coord, retain, name, prefix, chan, publish, floors, revocations = unpack(ARGV)
if string.find(session, ':', 1, true) then
  return {23, 0, 0, {}}
end
local hid = session .. ':' .. owner
--- @include "lock"
--- @include "purge"
--- @include "hand-on"
local lock = lockOf(KEYS, 1, chan)
local holderCount, waiterCount = purge(lock)
local found = rcall('HMGET', lock.data, 'h:' .. hid, 'd:' .. hid, 'delay')
local code, token, count = 22, 0, 0
local drop = {}
if found[1] then
  code = 21
  token, count = string.match(found[1], '^(%d+) (%d+)')
  holderCount = holderCount - rcall('ZREM', lock.holders, hid)
  event(lock, 'revoked', hid, 0)
  -- Not a release: the hold's lock-delay (delay.lua) starts now.
  holderCount = holderCount + holdOff(lock, found[2], now)
  -- Removed after the event, which reads them; hand-on deletes them with the keys when the lock is idle.
  drop = holderFields(hid)
  rcall('PUBLISH', revocations, session .. '\n' .. owner .. '\n' .. token .. '\n' .. name)
end
local granted = handOn(lock, holderCount, waiterCount, drop)
rest(lock, holderCount, waiterCount, found[3])
return {code, token, tonumber(count), granted}
