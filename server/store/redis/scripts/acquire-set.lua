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
local holders, data, queue, leases, fence, ver, chan -- set per name by use(i)
local session, owner, request, ttl, mayWait, coord, retain, value = unpack(ARGV, 1, 8)
local publish, floors, names = unpack(ARGV, 9, 11)
local hid, wid = session .. ':' .. owner, session .. ':' .. request
--- @include "sets-ahead"
--- @include "set-name"
-- tokens[i]: the token of a name hid already holds under this request (a re-run), else false.
local k, tokens, held, busy, ms, position = #KEYS / 6, {}, 0, nil, -1, 0
for i = 1, k do
  local mode, limit = use(i)
  local n = purged()
  local found = rcall('HMGET', data, 'limit', 'h:' .. hid)
  local token, gw = string.match(found[2] or '', '^(%d+) %d+ %d (.*)$')
  local refused = found[2] and gw ~= wid and {6, i}
  refused = refused or mode == '2' and found[1] and found[1] ~= limit and {4, i, found[1]}
  if refused then
    return refused
  end
  tokens[i], held = token or false, held + (token and 1 or 0)
  busy = busy or (not token and not (fits(mode, limit, n) and setsAhead(wid)) and i) or nil
end
if held < k and not busy then
  for i = 1, k do
    tokens[i] = tokens[i] or take(use(i))
  end
  held = k
end
if held == k or mayWait ~= '1' then
  return held == k and {1, tokens} or {3, busy}
end
-- Queued on the names it does not hold (a re-run may hold some: it never queues behind itself).
for i = 1, k do
  local mode, limit = use(i)
  if not tokens[i] then
    if not rcall('ZSCORE', queue, wid) then
      join(mode, limit)
    end
    rcall('ZADD', leases, now + ttl, wid)
    position = i == busy and rcall('ZRANK', queue, wid) + 1 or position
    local first = rcall('ZRANGE', holders, 0, 0, 'WITHSCORES')[2]
    ms = first and math.max(0, math.min(ms < 0 and math.huge or ms, first - now)) or ms
  end
end
return {2, busy, position, ms}
