-- event: numbers one holder change in the lock's version counter and publishes it on the event channel
-- as "version kind token count mode holders-left lease-ms\nholder\nvalue" (docs/data-model.md).
-- Version rule: a new counter starts at the Redis clock in µs and lapses `retain` + 1 day after creation;
--   a version always exceeds the floor V of `floors` "F V" (the Sentinel master's epoch).
-- Publish rule: 'watched' publishes only while PUBSUB NUMSUB counts a subscriber (asked once per run);
--   'always' publishes regardless (Cluster: NUMSUB is per node).
-- Expects in scope: rcall, holders, data, ver (keys), chan, publish, retain, floors (ARGV)
-- Defines: event(kind, h, ms) for holder h, whose h: record must still be in the data hash; returns nothing.
--   Also t, now (clock.lua), loud (publish decided: true, false, or nil until NUMSUB is asked), versionFloor
--- @include "clock"
local loud = publish ~= 'watched' or nil
local versionFloor = tonumber(string.match(floors, '^%d+ (%d+)$'))
local function event(kind, h, ms)
  local v = rcall('INCR', ver)
  if v == 1 then
    v = rcall('INCRBY', ver, string.format('%.0f', t[1] * 1e6 + t[2]))
    rcall('PEXPIRE', ver, retain + 86400000)
  end
  if v <= versionFloor then
    v = rcall('INCRBY', ver, string.format('%.0f', versionFloor - v + 1))
  end
  if loud == nil then
    loud = rcall('PUBSUB', 'NUMSUB', chan)[2] > 0
  end
  if not loud then
    return
  end
  local hold = string.match(rcall('HGET', data, 'h:' .. h), '^%d+ %d+ %d')
  local head = table.concat({string.format('%.0f', v), kind, hold, rcall('ZCARD', holders), ms}, ' ')
  rcall('PUBLISH', chan, head .. '\n' .. h .. '\n' .. (rcall('HGET', data, 'v:' .. h) or ''))
end
