-- acquire-set: grants a set of locks all together, or queues it on every name holding none
-- (docs/multi-lock.md). Granted when on every name, after purging, the claim fits (fits.lua) and only set
-- members wait ahead (sets-ahead.lua), each name with its own token. Else a set-member entry queues on
-- every name ("w:" mode 3 excl, 4 shared; "s:" the names; "sets" in the data hash): it blocks nobody, and
-- hand-on.lua tells its coordinator when a name frees. A re-run (same session, request) keeps its places.
-- KEYS: per name, in name order: 1 holders, 2 data, 3 queue, 4 leases, 5 fence, 6 version (data-model.md)
-- ARGV: session, owner, request, ttl ms, may wait (1/0), coordinator id, fence retain ms, value, publish,
--   floors (as in acquire.lua), the names joined by "\n", then per name: mode (1/2), limit, event channel;
--   then, only when some name has one, per name the lock-delay ms its hold gets (0: none; acquire.lua's)
-- Returns {1, {token, ...}} GRANTED (name order);  {2, i, position, ms} QUEUED (i: first name it waits for;
--   ms: until the earliest holder lease of any name ends, -1: none);  {3, i} BUSY (may wait = 0);
--   {4, i, limit} CONFLICT: the shared limit in force on name i differs;  {6, i} HELD: the owner holds name i
local rcall = redis.call
local session, owner, request, ttl, mayWait, coord, retain, value = unpack(ARGV, 1, 8)
local publish, floors, names = unpack(ARGV, 9, 11)
local hid, wid = session .. ':' .. owner, session .. ':' .. request
--- @include "sets-ahead"
--- @include "set-name"
-- tokens[index]: the token of a name hid already holds under this request (a re-run), else false.
local nameCount, tokens, held, busy, waitMs, position = #KEYS / 6, {}, 0, nil, -1, 0
for index = 1, nameCount do
  local lock, mode, limit = nameAt(index)
  local holderCount = purged(lock)
  local found = rcall('HMGET', lock.data, 'limit', 'h:' .. hid)
  local token, grantedTo = string.match(found[2] or '', '^(%d+) %d+ %d (.*)$')
  local refused = found[2] and grantedTo ~= wid and {6, index}
  refused = refused or mode == '2' and found[1] and found[1] ~= limit and {4, index, found[1]}
  if refused then
    return refused
  end
  tokens[index], held = token or false, held + (token and 1 or 0)
  if not (busy or token or fits(lock, mode, limit, holderCount) and setsAhead(lock, wid)) then
    busy = index
  end
end
if held < nameCount and not busy then
  for index = 1, nameCount do
    tokens[index] = tokens[index] or take(nameAt(index))
  end
  held = nameCount
end
if held == nameCount or mayWait ~= '1' then
  return held == nameCount and {1, tokens} or {3, busy}
end
-- Queued on the names it does not hold (a re-run may hold some: it never queues behind itself).
for index = 1, nameCount do
  local lock, mode, limit = nameAt(index)
  if not tokens[index] then
    if not rcall('ZSCORE', lock.queue, wid) then
      join(lock, mode, limit)
    end
    rcall('ZADD', lock.leases, now + ttl, wid)
    position = index == busy and rcall('ZRANK', lock.queue, wid) + 1 or position
    local first = rcall('ZRANGE', lock.holders, 0, 0, 'WITHSCORES')[2]
    waitMs = first and math.max(0, math.min(waitMs < 0 and math.huge or waitMs, first - now)) or waitMs
  end
end
return {2, busy, position, waitMs}
