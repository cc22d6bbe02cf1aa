-- proclaim: a holder replaces its value while its lease lasts. The change is versioned and published as
-- a 'value' event by event.lua. Purges nothing and hands nothing on.
-- KEYS: 1 holders, 2 data, 3 version (layout: docs/data-model.md)
-- ARGV: session, owner, value, event channel, publish (as in acquire.lua), fence retain ms (the version
--   counter's retention), floors (as in acquire.lua; only the version floor applies)
-- Returns {31}  PROCLAIMED
--         {32}  NOT_HELD: that session and owner hold no live lease on the lock
local rcall = redis.call
local session, owner, value, chan, publish, retain, floors = unpack(ARGV)
local hid = session .. ':' .. owner
-- The lock as event.lua takes it (lock.lua's shape, with only the keys it reads).
local lock = {
  holders = KEYS[1],
  data = KEYS[2],
  version = KEYS[3],
  events = chan,
  loud = publish ~= 'watched' or nil,
}
--- @include "event"
local deadline = tonumber(rcall('ZSCORE', lock.holders, hid))
if not deadline or deadline <= now then
  return {32}
end
rcall('HSET', lock.data, 'v:' .. hid, value)
event(lock, 'value', hid, deadline - now)
return {31}
