-- event: numbers one holder change in the lock's version counter and publishes it on the event channel
-- as "version kind token count mode holders-left lease-ms\nholder\nvalue" (docs/data-model.md); a transfer
-- ('transferred', `from` = {id, hold "token count mode", value}) as "version transferred token count mode
-- holders-left lease-ms from-token from-count from-mode from-value-bytes\nholder\nfrom-id\nfrom-value value".
-- Version rule: a new counter starts at the Redis clock in µs and lapses `retain` + 1 day after creation;
--   a version always exceeds the floor V of `floors` "F V" (the Sentinel master's epoch).
-- Publish rule: 'watched' publishes only while PUBSUB NUMSUB counts a subscriber (asked once per run and
--   lock: lock.loud, lock.lua); 'always' publishes regardless (Cluster: NUMSUB is per node).
-- Expects in scope: rcall, retain, floors (ARGV)
-- Defines: event(lock, kind, holder, leaseMs, from) for a holder whose h: record is still in the lock's data
--   hash; returns nothing. Also redisTime, now (clock.lua), versionFloor
--- @include "clock"
local versionFloor = tonumber(string.match(floors, '^%d+ (%d+)$'))
local function event(lock, kind, holder, leaseMs, from)
  local version = rcall('INCR', lock.version)
  if version == 1 then
    version = rcall('INCRBY', lock.version, string.format('%.0f', redisTime[1] * 1e6 + redisTime[2]))
    rcall('PEXPIRE', lock.version, retain + 86400000)
  end
  if version <= versionFloor then
    version = rcall('INCRBY', lock.version, string.format('%.0f', versionFloor - version + 1))
  end
  if lock.loud == nil then
    lock.loud = rcall('PUBSUB', 'NUMSUB', lock.events)[2] > 0
  end
  if not lock.loud then
    return
  end
  local hold = string.match(rcall('HGET', lock.data, 'h:' .. holder), '^%d+ %d+ %d')
  local left = rcall('ZCARD', lock.holders)
  local head = table.concat({string.format('%.0f', version), kind, hold, left, leaseMs}, ' ')
  local value = rcall('HGET', lock.data, 'v:' .. holder) or ''
  if from then
    head = head .. ' ' .. from.hold .. ' ' .. #from.value
    value = from.id .. '\n' .. from.value .. value
  end
  rcall('PUBLISH', lock.events, head .. '\n' .. holder .. '\n' .. value)
end
