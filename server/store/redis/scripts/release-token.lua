-- release-token: replays releases the old master acknowledged, on a new master after a failover
-- (journal/journal-replay.ts): for each (session, owner, token) drops the hold of (session, owner) on the
-- lock only while it is still there with exactly that fencing token (tokens are unique per grant, so it
-- is the very hold that was let go: every count of it), then hands the lock on (hand-on.lua) as
-- release.lua does. Anything else (no hold, an expired one, a later grant's token) is left as it is: the
-- release took effect on this master, or that hold ended anyway.
-- KEYS: 1 holders, 2 data, 3 queue, 4 leases, 5 fence, 6 version (layout: docs/data-model.md)
-- ARGV: coordinator id, fence retain ms, lock name, grant channel prefix, event channel, publish, floors
--   (release.lua's ARGV from the coordinator id on), then per hold: session, owner, token
-- Returns {code, dropped, grants}; dropped: how many holds went; grants: {waiter, token, ...} as in
--   release.lua
--   code 41 DROPPED (at least one hold had its token and is gone now), 42 NOT_HELD (none did; an expired
--   holder is still purged and the lock handed on)
local rcall = redis.call
local coord, retain, name, prefix, chan, publish, floors = unpack(ARGV, 1, 7)
--- @include "lock"
--- @include "purge"
--- @include "hand-on"
local lock = lockOf(KEYS, 1, chan)
local holderCount, waiterCount = purge(lock)
local drop, dropped = {}, 0
for hold = 8, #ARGV - 2, 3 do
  local hid = ARGV[hold] .. ':' .. ARGV[hold + 1]
  local record = rcall('HGET', lock.data, 'h:' .. hid)
  if record and string.match(record, '^%d+') == ARGV[hold + 2] then
    dropped = dropped + 1
    holderCount = holderCount - rcall('ZREM', lock.holders, hid)
    event(lock, 'released', hid, 0)
    -- Removed after the event, which reads them; hand-on deletes them with the keys when the lock is idle.
    for _, field in ipairs(holderFields(hid)) do
      table.insert(drop, field)
    end
  end
end
local granted = handOn(lock, holderCount, waiterCount, drop)
-- A lock-delay in force (delay.lua) grants nobody; left alone, the delayed lock's keys expire at its end.
rest(lock, holderCount, waiterCount, rcall('HGET', lock.data, 'delay'))
return {dropped > 0 and 41 or 42, dropped, granted}
