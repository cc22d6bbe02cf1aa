-- release: let go of one claim, then hand the lock to the head waiter(s). With request = '' it drops
-- one hold of (session, owner) ('one') or all ('all'). With a request: 'cancel' withdraws that waiter,
-- or releases its grant if the grant raced the cancel; 'abandon' (broken stream) withdraws it only
-- while it is attached to this coordinator and never releases a grant. Other coordinators' grants
-- are published on their grant channels; holder changes (expired, released, acquired) INCR the version
-- and go out on the event channel under acquire.lua's publish rule, in its format.
-- KEYS: 1 holders, 2 data, 3 queue, 4 leases, 5 fence, 6 version (layout: acquire.lua)
-- ARGV: session, owner, request or '', how ('one', 'all', 'cancel', 'abandon'), coordinator id,
--       fence retain ms, lock name, grant channel prefix, event channel, publish (as in acquire.lua)
-- Returns {code, holds left, {waiter, token, ...} granted to this coordinator}
--   code 11 RELEASED, 12 NOT_HELD, 13 WITHDRAWN (waiter left the queue),
--   14 GRANT_RELEASED (raced grant let go), 15 GONE (no such waiter or grant)
local rcall = redis.call
local holders, data, queue, leases, fence, ver = unpack(KEYS)
local session, owner, request, how, coord, retain, name, prefix, chan, publish = unpack(ARGV)
local hid, wid, loud = session .. ':' .. owner, session .. ':' .. request, publish ~= 'watched' or nil
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
local code, left = 12, 0
local rec, token, count, hmode, gw = rcall('HGET', data, 'h:' .. hid)
if rec then token, count, hmode, gw = string.match(rec, '^(%d+) (%d+) (%d) (.*)$') end
if request ~= '' then
  local w = rcall('HGET', data, 'w:' .. wid)
  if w and (how == 'cancel' or string.match(w, '^%S+') == coord) then
    code = 13; rcall('ZREM', queue, wid); rcall('ZREM', leases, wid); rcall('HDEL', data, 'w:' .. wid, 'v:' .. hid, 'q:' .. wid)
  else code = (how == 'cancel' and rec and gw == wid) and 14 or 15 end
elseif rec then
  code, left = 11, how == 'all' and 0 or tonumber(count) - 1
  if left > 0 then rcall('HSET', data, 'h:' .. hid, token .. ' ' .. left .. ' ' .. hmode .. ' ' .. gw) end
end
local gone = (code == 11 and left == 0) or code == 14
if gone then rcall('ZREM', holders, hid); event('released', hid, 0) end
local n, granted, head = rcall('ZCARD', holders), {}, rcall('ZRANGE', queue, 0, 0)[1]
-- Idle: deleting the keys drops the released hold's fields and 'excl' with them.
if n == 0 and not head then rcall('DEL', holders, data, queue, leases); return {code, left, granted} end
local drop = gone and {'h:' .. hid, 'v:' .. hid, 'a:' .. hid} or {}
if n == 0 then table.insert(drop, 'excl') end
if #drop > 0 then rcall('HDEL', data, unpack(drop)) end
while head do
  local wc, wm, wl, wo = string.match(rcall('HGET', data, 'w:' .. head), '^(%S+) (%d) (%d+) (.*)$')
  if n > 0 and not (wm == '2' and rcall('HEXISTS', data, 'excl') == 0 and (wl == '0' or n < tonumber(wl))) then break end
  local tok, lease = rcall('INCR', fence) and rcall('GET', fence), rcall('ZSCORE', leases, head)
  rcall('PEXPIRE', fence, math.max(0, lease - now) + retain)
  local h = string.match(head, '^[^:]*:') .. wo
  rcall('ZADD', holders, lease, h); rcall('HSET', data, 'h:' .. h, tok .. ' 1 ' .. wm .. ' ' .. head, 'a:' .. h, now, unpack(wm == '1' and {'excl', '1'} or {}))
  rcall('ZREM', queue, head); rcall('ZREM', leases, head); rcall('HDEL', data, 'w:' .. head, 'q:' .. head)
  n = n + 1; event('acquired', h, lease - now)
  if wc == coord then table.insert(granted, head); table.insert(granted, tok)
  else rcall('PUBLISH', prefix .. wc, head .. '\n' .. tok .. '\n' .. name) end
  head = rcall('ZRANGE', queue, 0, 0)[1]
end
return {code, left, granted}
