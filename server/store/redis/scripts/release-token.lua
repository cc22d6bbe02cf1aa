-- release-token: replays a release the old master acknowledged after a failover (writes/release-journal.ts):
-- drops the hold of (session, owner) on the lock only while it is still there with exactly that fencing
-- token (tokens are unique per grant, so it is the very hold that was let go, every count of it), then
-- hands the lock on (hand-on.lua) as release.lua does. Anything else (no hold, an expired one, another
-- grant's token) is left as it is: the release took effect on this master, or the hold ended anyway.
-- KEYS: 1 holders, 2 data, 3 queue, 4 leases, 5 fence, 6 version (layout: docs/data-model.md)
-- ARGV: session, owner, token, coordinator id, fence retain ms, lock name, grant channel prefix, event
--   channel, publish, floors (from the coordinator id on as in release.lua)
-- Returns {code, grants}; grants: {waiter, token, ...} as in release.lua
--   code 41 DROPPED (the hold had that token and is gone now), 42 NOT_HELD (no live hold of (session,
--   owner) with that token; an expired holder is still purged and the lock handed on)
local rcall = redis.call
local holders, data, queue, leases, fence, ver = unpack(KEYS)
local session, owner, token, coord, retain, name, prefix, chan, publish, floors = unpack(ARGV)
local hid = session .. ':' .. owner
--- @include "purge"
--- @include "hand-on"
local code = 42
local drop = {}
local rec = rcall('HGET', data, 'h:' .. hid)
if rec and string.match(rec, '^%d+') == token then
  code = 41
  n = n - rcall('ZREM', holders, hid)
  event('released', hid, 0)
  -- Removed after the event, which reads them; hand-on deletes them with the keys when the lock is idle.
  drop = holderFields(hid)
end
return {code, handOn(n, waiting, drop)}
