-- check: the timed re-check at a holder's lease deadline, and the backstop after a lost pub/sub
-- connection. Purges expired holders and waiters, hands the lock to the head waiter(s) (hand-on.lua),
-- and reports on the waiters asked about. Holder changes (expired, acquired) are versioned and published
-- by event.lua.
-- KEYS: 1 holders, 2 data, 3 queue, 4 leases, 5 fence, 6 version (layout: docs/data-model.md)
-- ARGV: coordinator id, fence retain ms, lock name, grant channel prefix (as in release.lua), event channel,
--   publish, floors (as in acquire.lua), then pairs: waiter id, holder id it would become
-- Returns {ms, {waiter, token, ...} granted to this coordinator (and others' when prefix is ''), statuses}
--   ms: until the earliest holder lease or lock-delay ends (-1: neither)
--   status per pair: 'q' still queued, a token: granted to that waiter, '' gone (expired or never queued)
local rcall = redis.call
local coord, retain, name, prefix, chan, publish, floors = unpack(ARGV, 1, 7)
--- @include "lock"
--- @include "purge"
--- @include "hand-on"
local lock = lockOf(KEYS, 1, chan)
local holderCount, waiterCount = purge(lock)
local granted = handOn(lock, holderCount, waiterCount, {})
local statuses = {}
for pair = 8, #ARGV, 2 do
  local waiter, holder = ARGV[pair], ARGV[pair + 1]
  local status = rcall('ZSCORE', lock.queue, waiter) and 'q' or ''
  local record = rcall('HGET', lock.data, 'h:' .. holder)
  if record then
    local token, grantedTo = string.match(record, '^(%d+) %d+ %d (.*)$')
    if grantedTo == waiter then
      status = token
    end
  end
  table.insert(statuses, status)
end
local first = rcall('ZRANGE', lock.holders, 0, 0, 'WITHSCORES')
-- A lock-delay in force (delay.lua) is a holder here: the re-check falls due at its end.
rest(lock, holderCount, waiterCount, first[1] == DELAY and first[2])
return {first[2] and math.max(0, first[2] - now) or -1, granted, statuses}
