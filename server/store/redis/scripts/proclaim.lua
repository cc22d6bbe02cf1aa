-- proclaim: a holder replaces its value while its lease lasts. The change INCRs the version and goes
-- out as a 'value' event on the event channel under acquire.lua's publish rule, in its format.
-- Purges nothing and hands nothing on.
-- KEYS: 1 holders, 2 data, 3 version (layout: acquire.lua)
-- ARGV: session, owner, value, event channel, publish (as in acquire.lua), fence retain ms (the version
--       counter's retention), floors (as in acquire.lua; only the version floor applies)
-- Returns {31}  PROCLAIMED
--         {32}  NOT_HELD: that session and owner hold no live lease on the lock
local rcall = redis.call
local holders, data, ver = unpack(KEYS)
local session, owner, value, chan, publish, retain, floors = unpack(ARGV)
local hid, loud, vfl = session .. ':' .. owner, publish ~= 'watched' or nil, string.match(floors, '^%d+ (%d+)$')
local t = rcall('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function event(kind, h, ms)
  local v = rcall('INCR', ver)
  if v == 1 then v = rcall('INCRBY', ver, string.format('%.0f', t[1] * 1e6 + t[2])); rcall('PEXPIRE', ver, retain + 86400000) end
  if v <= tonumber(vfl) then v = rcall('INCRBY', ver, string.format('%.0f', vfl - v + 1)) end
  if loud == nil then loud = rcall('PUBSUB', 'NUMSUB', chan)[2] > 0 end
  if loud then rcall('PUBLISH', chan, table.concat({string.format('%.0f', v), kind, string.match(rcall('HGET', data, 'h:' .. h), '^%d+ %d+ %d'),
    rcall('ZCARD', holders), ms}, ' ') .. '\n' .. h .. '\n' .. (rcall('HGET', data, 'v:' .. h) or '')) end
end

local deadline = tonumber(rcall('ZSCORE', holders, hid))
if not deadline or deadline <= now then return {32} end
rcall('HSET', data, 'v:' .. hid, value)
event('value', hid, deadline - now)
return {31}
