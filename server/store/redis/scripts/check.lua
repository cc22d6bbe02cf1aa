-- check: the timed re-check at a holder's lease deadline, and the backstop after a lost pub/sub
-- connection. Purges expired holders and waiters, hands the lock to the head waiter(s), and reports
-- on the waiters asked about. Holder changes (expired, acquired) INCR the version and go out on the
-- event channel under acquire.lua's publish rule, in its format.
-- KEYS: 1 holders, 2 data, 3 queue, 4 leases, 5 fence, 6 version (layout: acquire.lua)
-- ARGV: coordinator id, fence retain ms, lock name, grant channel prefix, event channel,
--       publish (as in acquire.lua), then pairs: waiter id, holder id it would become
-- Returns {ms, {waiter, token, ...} granted to this coordinator, statuses}
--   ms: until the earliest holder lease ends (-1: no holder)
--   status per pair: 'q' still queued, a token: granted to that waiter,
--   '' gone (expired or never queued)
local rcall = redis.call
local holders, data, queue, leases, fence, ver = unpack(KEYS)
local coord, retain, name, prefix, chan, loud = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6] ~= 'watched' or nil
local t = rcall('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function event(kind, h, ms)
  local v = rcall('INCR', ver)
  if v == 1 then v = rcall('INCRBY', ver, string.format('%.0f', t[1] * 1e6 + t[2])); rcall('PEXPIRE', ver, retain + 86400000) end
  if loud == nil then loud = rcall('PUBSUB', 'NUMSUB', chan)[2] > 0 end
  if loud then rcall('PUBLISH', chan, table.concat({string.format('%.0f', v), kind, string.match(rcall('HGET', data, 'h:' .. h), '^%d+ %d+ %d'),
    rcall('ZCARD', holders), ms}, ' ') .. '\n' .. h .. '\n' .. (rcall('HGET', data, 'v:' .. h) or '')) end
end
for _, h in ipairs(rcall('ZRANGEBYSCORE', holders, '-inf', now)) do rcall('ZREM', holders, h); event('expired', h, 0); rcall('HDEL', data, 'h:' .. h, 'v:' .. h, 'a:' .. h) end
for _, w in ipairs(rcall('ZRANGEBYSCORE', leases, '-inf', now)) do rcall('ZREM', leases, w); rcall('ZREM', queue, w); rcall('HDEL', data, 'w:' .. w, 'q:' .. w) end

local n, granted = rcall('ZCARD', holders), {}
if n == 0 then rcall('HDEL', data, 'excl') end
while true do
  local head = rcall('ZRANGE', queue, 0, 0)[1]
  if not head then break end
  local wc, wm, wl, wo = string.match(rcall('HGET', data, 'w:' .. head), '^(%S+) (%d) (%d+) (.*)$')
  if n > 0 and not (wm == '2' and rcall('HEXISTS', data, 'excl') == 0 and (wl == '0' or n < tonumber(wl))) then break end
  local tok, lease = rcall('INCR', fence) and rcall('GET', fence), rcall('ZSCORE', leases, head)
  rcall('PEXPIRE', fence, math.max(0, lease - now) + retain)
  local h = string.match(head, '^[^:]*:') .. wo
  rcall('ZADD', holders, lease, h); rcall('HSET', data, 'h:' .. h, tok .. ' 1 ' .. wm .. ' ' .. head, 'a:' .. h, now)
  if wm == '1' then rcall('HSET', data, 'excl', '1') end
  rcall('ZREM', queue, head); rcall('ZREM', leases, head); rcall('HDEL', data, 'w:' .. head, 'q:' .. head)
  n = n + 1; event('acquired', h, lease - now)
  if wc == coord then table.insert(granted, head); table.insert(granted, tok)
  else rcall('PUBLISH', prefix .. wc, head .. '\n' .. tok .. '\n' .. name) end
end
if n == 0 and rcall('ZCARD', queue) == 0 then rcall('DEL', holders, data, queue, leases) end

local statuses = {}
for i = 7, #ARGV, 2 do
  local status = rcall('ZSCORE', queue, ARGV[i]) and 'q' or ''
  local rec = rcall('HGET', data, 'h:' .. ARGV[i + 1])
  if rec then
    local tok, gw = string.match(rec, '^(%d+) %d+ %d (.*)$')
    if gw == ARGV[i] then status = tok end
  end
  table.insert(statuses, status)
end
local first = rcall('ZRANGE', holders, 0, 0, 'WITHSCORES')
return {first[2] and math.max(0, first[2] - now) or -1, granted, statuses}
