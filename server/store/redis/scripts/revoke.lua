-- revoke: an operator takes one holder's hold away (every count of it) at once, then hands the
-- lock on like release.lua. The holder's coordinator learns it from the broadcast on the revocation
-- channel ("session\nowner\ntoken\nname"); other coordinators' grants are published on their grant
-- channels; holder changes (expired, revoked, acquired) INCR the version and go out on the event
-- channel under acquire.lua's publish rule, in its format.
-- KEYS: 1 holders, 2 data, 3 queue, 4 leases, 5 fence, 6 version (layout: acquire.lua)
-- ARGV: session, owner, coordinator id, fence retain ms, lock name, grant channel prefix (as in release.lua),
--       event channel, publish, floors (as in acquire.lua), revocation channel
-- Returns {code, token, count, {waiter, token, ...} granted to this coordinator (and others' when prefix is '')}
--   code 21 REVOKED (the revoked hold's token and count), 22 NOT_HELD (that session and owner
--   hold no live lease on the lock; token and count 0; an expired holder is still purged),
--   23 INVALID_SESSION (the session contains ':', so "session:owner" could name another session's
--   hold; nothing is read or changed; token and count 0)
local rcall = redis.call
local holders, data, queue, leases, fence, ver = unpack(KEYS)
local session, owner, coord, retain, name, prefix, chan, publish, floors, revocations = unpack(ARGV)
if string.find(session, ':', 1, true) then return {23, 0, 0, {}} end
local hid, loud, ffl, vfl = session .. ':' .. owner, publish ~= 'watched' or nil, string.match(floors, '^(%d+) (%d+)$')
local t = rcall('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function event(kind, h, ms)
  local v = rcall('INCR', ver)
  if v == 1 then v = rcall('INCRBY', ver, string.format('%.0f', t[1] * 1e6 + t[2])); rcall('PEXPIRE', ver, retain + 86400000) end
  if v <= tonumber(vfl) then v = rcall('INCRBY', ver, string.format('%.0f', vfl - v + 1)) end
  if loud == nil then loud = rcall('PUBSUB', 'NUMSUB', chan)[2] > 0 end
  if loud then rcall('PUBLISH', chan, table.concat({string.format('%.0f', v), kind, string.match(rcall('HGET', data, 'h:' .. h), '^%d+ %d+ %d'),
    rcall('ZCARD', holders), ms}, ' ') .. '\n' .. h .. '\n' .. (rcall('HGET', data, 'v:' .. h) or '')) end
end
for _, h in ipairs(rcall('ZRANGEBYSCORE', holders, '-inf', now)) do rcall('ZREM', holders, h); event('expired', h, 0); rcall('HDEL', data, 'h:' .. h, 'v:' .. h, 'a:' .. h) end
for _, w in ipairs(rcall('ZRANGEBYSCORE', leases, '-inf', now)) do rcall('ZREM', leases, w); rcall('ZREM', queue, w); rcall('HDEL', data, 'w:' .. w, 'q:' .. w) end

local rec, code, token, count = rcall('HGET', data, 'h:' .. hid), 22, 0, 0
if rec then
  code, token, count = 21, string.match(rec, '^(%d+) (%d+)')
  rcall('ZREM', holders, hid); event('revoked', hid, 0); rcall('HDEL', data, 'h:' .. hid, 'v:' .. hid, 'a:' .. hid)
  rcall('PUBLISH', revocations, session .. '\n' .. owner .. '\n' .. token .. '\n' .. name)
end

local n, granted = rcall('ZCARD', holders), {}
if n == 0 then rcall('HDEL', data, 'excl') end
while true do
  local head = rcall('ZRANGE', queue, 0, 0)[1]
  if not head then break end
  local wc, wm, wl, wo = string.match(rcall('HGET', data, 'w:' .. head), '^(%S+) (%d) (%d+) (.*)$')
  if n > 0 and not (wm == '2' and rcall('HEXISTS', data, 'excl') == 0 and (wl == '0' or n < tonumber(wl))) then break end
  local tok, lease = rcall('INCR', fence), rcall('ZSCORE', leases, head); if tok <= tonumber(ffl) then tok = rcall('INCRBY', fence, string.format('%.0f', ffl - tok + 1)) end
  tok = string.format('%.0f', tok); rcall('PEXPIRE', fence, math.max(0, lease - now) + retain)
  local h = string.match(head, '^[^:]*:') .. wo
  rcall('ZADD', holders, lease, h); rcall('HSET', data, 'h:' .. h, tok .. ' 1 ' .. wm .. ' ' .. head, 'a:' .. h, now)
  if wm == '1' then rcall('HSET', data, 'excl', '1') end
  rcall('ZREM', queue, head); rcall('ZREM', leases, head); rcall('HDEL', data, 'w:' .. head, 'q:' .. head)
  n = n + 1; event('acquired', h, lease - now)
  if wc == coord or prefix == '' then table.insert(granted, wc == coord and head or wc .. ' ' .. head); table.insert(granted, tok)
  else rcall('PUBLISH', prefix .. wc, head .. '\n' .. tok .. '\n' .. name) end
end
if n == 0 and rcall('ZCARD', queue) == 0 then rcall('DEL', holders, data, queue, leases) end
return {code, token, tonumber(count), granted}
