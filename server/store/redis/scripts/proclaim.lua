-- proclaim: a holder replaces its value while its lease lasts. The change goes out as a 'value'
-- event on the event channel, in acquire.lua's format. Purges nothing and hands nothing on.
-- KEYS: 1 holders, 2 data, 3 version (layout: acquire.lua)
-- ARGV: session, owner, value, event channel, fence retain ms (the version counter's retention)
-- Returns {31}  PROCLAIMED
--         {32}  NOT_HELD: that session and owner hold no live lease on the lock
local rcall = redis.call
local holders, data, ver = unpack(KEYS)
local session, owner, value, chan, retain = unpack(ARGV)
local hid = session .. ':' .. owner
local t = rcall('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function event(kind, h, ms)
  local v, tok, cnt, m = rcall('INCR', ver), string.match(rcall('HGET', data, 'h:' .. h), '^(%d+) (%d+) (%d)')
  if v == 1 then v = rcall('INCRBY', ver, string.format('%.0f', t[1] * 1e6 + t[2])); rcall('PEXPIRE', ver, retain + 86400000) end
  rcall('PUBLISH', chan, table.concat({string.format('%.0f', v), kind, tok, cnt, m, rcall('ZCARD', holders), ms}, ' ') .. '\n' .. h .. '\n' .. (rcall('HGET', data, 'v:' .. h) or ''))
end

local deadline = tonumber(rcall('ZSCORE', holders, hid))
if not deadline or deadline <= now then return {32} end
rcall('HSET', data, 'v:' .. hid, value)
event('value', hid, deadline - now)
return {31}
