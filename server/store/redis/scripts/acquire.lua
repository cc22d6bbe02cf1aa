-- acquire: grant, re-enter, queue (by priority, then FIFO: queue-rank.lua) or refuse one claim, after purging
-- expired entries; a new claim is granted only if it fits (fits.lua) and only set members wait ahead. A
-- re-sent request (same session and request id) is idempotent: queued, it keeps its place under the caller;
-- granted or re-entered, it gets its hold again without counting one more (reenter.lua).
-- KEYS: 1 holders, 2 data, 3 queue, 4 leases, 5 fence, 6 version (layout: docs/data-model.md)
-- ARGV: session, owner, request, ttl ms, mode (1 excl, 2 shared), limit, may wait (1/0), coordinator, fence
--   retain ms, value (kept for the holder the claim becomes), event channel, publish ('watched' or 'always':
--   event.lua), floors "F V" (tokens exceed F, versions V), lock-delay ms, priority (each absent or 0: none)
-- Returns {1, token, count} GRANTED (count > 1: re-entered, same token);  {3[, ms]} BUSY (may wait = 0; ms:
--   lock-delay left, <= 0 none);  {2, position, ms} QUEUED (ms until the earliest holder lease ends);
--   {5} UPGRADE: a shared holder asked exclusive;  {4, limit} CONFLICT: the shared limit differs (re-entry)
local rcall = redis.call
local session, owner, request, ttl, mode, limit, mayWait = unpack(ARGV, 1, 7)
local coord, retain, value, chan, publish, floors, lockDelay, priority = unpack(ARGV, 8, 15)
local hid, wid = session .. ':' .. owner, session .. ':' .. request
--- @include "lock"
--- @include "purge"
--- @include "fits"
--- @include "grant"
--- @include "reenter"
--- @include "queue-rank"
local lock, ranked = lockOf(KEYS, 1, chan), nil
local holderCount, waiterCount, firstEnd = purge(lock)
-- Idle: the emptied hash holds no limit, hold or waiter to look up. Past here only a shared claim fits.
local idle = holderCount == 0 and waiterCount == 0
if idle then
  rcall('DEL', lock.data)
elseif holderCount == 0 then
  rcall('HDEL', lock.data, 'excl')
end
local fields = {'w:' .. wid, coord .. ' ' .. mode .. ' ' .. limit .. ' ' .. owner, 'v:' .. hid, value}
local found = idle and {} or rcall('HMGET', lock.data, 'limit', 'h:' .. hid, 'delay', 'sets',
  fields[1], 'seq')
rest(lock, holderCount, waiterCount, found[3])
local conflict = mode == '2' and found[1] and found[1] ~= limit
if conflict or found[2] then
  return conflict and {4, found[1]} or reenter(lock, found[2])
end
-- Not queued yet without a waiter record (found[5]); a new entry is last among its priority (queue-rank.lua).
if not found[5] then
  if (waiterCount == 0 or found[4] and setsAhead(lock, wid)) and fits(lock, mode, limit, holderCount) then
    local held = mode == '2' and {fields[3], value, 'limit', limit} or {fields[3], value}
    return {1, grant(lock, hid, wid, mode, now + ttl, withDelay(held, 'd:' .. hid, lockDelay)), 1}
  end
  if mayWait ~= '1' then
    return found[3] and {3, tonumber(found[3]) - now} or {3}
  end
  fields[5], fields[6] = 'q:' .. wid, now
  ranked = enqueue(lock, wid, priority, found[6], fields)
  if mode == '2' then
    fields[#fields + 1], fields[#fields + 2] = 'limit', limit
  end
  keep(lock)
end
local position = found[5] and rcall('ZRANK', lock.queue, wid) + 1 or ranked or waiterCount + 1
rcall('ZADD', lock.leases, now + ttl, wid)
rcall('HSET', lock.data, unpack(withDelay(fields, 'y:' .. wid, lockDelay)))
firstEnd = firstEnd or tonumber(rcall('ZRANGE', lock.holders, 0, 0, 'WITHSCORES')[2] or 0)
return {2, position, math.max(0, firstEnd - now)}
