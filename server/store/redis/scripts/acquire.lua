-- acquire: grant, re-enter, queue or refuse one claim, after purging expired entries; a new claim is
-- granted only if it fits and nobody waits ahead (FIFO). A re-sent request (same session and request
-- id) is idempotent: queued, it keeps its place under the caller; granted, it gets its grant again.
-- KEYS: 1 holders zset holder -> lease deadline ms (Redis clock); 2 data hash h:<holder> "token count mode waiter",
--   v:<holder> value, w:<waiter> "coord mode limit owner", a:<holder> / q:<waiter> Redis-clock ms it was granted /
--   first queued, limit, excl, seq; 3 queue zset waiter -> arrival; 4 leases zset waiter -> deadline; 5 fence string counter, kept
--   `retain` ms past every lease; 6 version string, counts holder changes (lapses `retain` + 1 day after creation)
-- ARGV: session, owner, request, ttl ms, mode (1 excl, 2 shared), limit, may wait (1/0), coordinator id,
--   fence retain ms, value (kept for the holder the claim becomes), event channel, publish ('watched' or 'always')
-- Publish rule: each holder change (expired, acquired) INCRs the version (a new counter starts at the Redis clock
--   in µs) and goes out on the event channel as "version kind token count mode holders-left lease-ms\nholder\nvalue"
--   unless publish = 'watched' and PUBSUB NUMSUB counts no subscriber ('always' on Cluster: NUMSUB is per node).
-- Returns {1, token, count}  GRANTED (count > 1: re-entered, same token)
--         {2, position, ms}  QUEUED; ms until the earliest holder lease ends
--         {3}                BUSY (may wait = 0)
--         {4, limit}         CONFLICT: the shared limit in force differs (re-entry too)
--         {5}                UPGRADE refused: shared holder asked exclusive
local rcall = redis.call
local holders, data, queue, leases, fence, ver = unpack(KEYS)
local session, owner, request, ttl, mode, limit = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6]
local mayWait, coord, retain, value, chan, loud = ARGV[7] == '1', ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12] ~= 'watched' or nil
local hid, wid = session .. ':' .. owner, session .. ':' .. request
local t = rcall('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function event(kind, h, ms)
  local v = rcall('INCR', ver)
  if v == 1 then v = rcall('INCRBY', ver, string.format('%.0f', t[1] * 1e6 + t[2])); rcall('PEXPIRE', ver, retain + 86400000) end
  if loud == nil then loud = rcall('PUBSUB', 'NUMSUB', chan)[2] > 0 end
  if loud then rcall('PUBLISH', chan, table.concat({string.format('%.0f', v), kind, string.match(rcall('HGET', data, 'h:' .. h), '^%d+ %d+ %d'),
    rcall('ZCARD', holders), ms}, ' ') .. '\n' .. h .. '\n' .. (rcall('HGET', data, 'v:' .. h) or '')) end
end
local n, waiting = rcall('ZCARD', holders), rcall('ZCARD', queue)
if n > 0 then for _, h in ipairs(rcall('ZRANGEBYSCORE', holders, '-inf', now)) do rcall('ZREM', holders, h); n = n - 1; event('expired', h, 0); rcall('HDEL', data, 'h:' .. h, 'v:' .. h, 'a:' .. h) end end
for _, w in ipairs(rcall('ZRANGEBYSCORE', leases, '-inf', now)) do rcall('ZREM', leases, w); waiting = waiting - rcall('ZREM', queue, w); rcall('HDEL', data, 'w:' .. w, 'q:' .. w) end
local function grant()
  local token = rcall('INCR', fence) and rcall('GET', fence)
  rcall('PEXPIRE', fence, ttl + retain); rcall('ZADD', holders, now + ttl, hid)
  rcall('HSET', data, 'h:' .. hid, token .. ' 1 ' .. mode .. ' ' .. wid, 'v:' .. hid, value, 'a:' .. hid, now, unpack(mode == '1' and {'excl', '1'} or {'limit', limit}))
  event('acquired', hid, ttl); return {1, token, 1}
end
-- Idle: the emptied hash holds no limit, hold or waiter: grant at once. Past here only a shared claim fits.
if n == 0 then if waiting == 0 then rcall('DEL', data); return grant() end; rcall('HDEL', data, 'excl') end
local inForce = rcall('HGET', data, 'limit')
if mode == '2' and inForce and inForce ~= limit then return {4, inForce} end
local rec = rcall('HGET', data, 'h:' .. hid)
if rec then
  local token, count, hmode, gw = string.match(rec, '^(%d+) (%d+) (%d) (.*)$')
  if gw == wid then rcall('ZADD', holders, now + ttl, hid); return {1, token, tonumber(count)} end
  if hmode == '2' and mode == '1' then return {5} end
  count = tonumber(count) + 1; rcall('HSET', data, 'h:' .. hid, token .. ' ' .. count .. ' ' .. hmode .. ' ' .. gw)
  return {1, token, count}
end
if not rcall('ZSCORE', queue, wid) then
  if waiting == 0 and mode == '2' and rcall('HEXISTS', data, 'excl') == 0 and (limit == '0' or n < tonumber(limit)) then return grant() end
  if not mayWait then return {3} elseif mode == '2' then rcall('HSET', data, 'limit', limit) end
  rcall('ZADD', queue, rcall('HINCRBY', data, 'seq', 1), wid); rcall('HSET', data, 'q:' .. wid, now)
end
rcall('ZADD', leases, now + ttl, wid)
rcall('HSET', data, 'w:' .. wid, coord .. ' ' .. mode .. ' ' .. limit .. ' ' .. owner, 'v:' .. hid, value)
local first = rcall('ZRANGE', holders, 0, 0, 'WITHSCORES')
return {2, rcall('ZRANK', queue, wid) + 1, first[2] and math.max(0, first[2] - now) or 0}
