-- transfer: the holder (session, owner) of an exclusive hold hands it to a waiter in one step: the waiter
-- leaves the queue and holds with a new token (grant.lua), one 'transferred' change from the old holder; no
-- lock-delay applies. A re-run after a lost reply finds its transfer in 'moved' by the old token: answered.
-- KEYS: 1 holders, 2 data, 3 queue, 4 leases, 5 fence, 6 version (layout: docs/data-model.md)
-- ARGV: session, owner, hold's token, successor session ('': the head of the queue), successor owner ('':
--   that session's first waiter), then as release.lua from the coordinator id: coordinator id, fence retain
--   ms, lock name, grant channel prefix, event channel, publish, floors
-- Returns {code, grants, ...} (grants as in release.lua; a refusal still hands on what purge freed):
--   51 TRANSFERRED {51, grants, token, waiter, successor holder}; 52 NOT_HELD; 53 SHARED (a shared
--   hold); 54 IN_SET (the successor is an acquire-set member); 55 NOT_WAITING {55, grants, {holder,
--   waiter, ...}}: the successor does not wait; the first 10 who do
local rcall = redis.call
local session, owner, token, toSession, toOwner = unpack(ARGV, 1, 5)
local coord, retain, name, prefix, chan, publish, floors = unpack(ARGV, 6, 12)
local hid = session .. ':' .. owner
--- @include "lock"
--- @include "purge"
--- @include "hand-on"
--- @include "successor"
local lock = lockOf(KEYS, 1, chan)
local holderCount, waiterCount = purge(lock)
local found = rcall('HMGET', lock.data, 'h:' .. hid, 'moved', 'v:' .. hid, 'delay')
-- A refusal still ends what purge ended: a delay left alone rests (delay-expiry.lua), as after a release.
local function refuse(code, ...)
  local granted = handOn(lock, holderCount, waiterCount, {})
  rest(lock, holderCount, waiterCount, found[4])
  return {code, granted, ...}
end
if not found[1] then
  local old, new, waiter, holder = string.match(found[2] or '', '^(%d+)\n(%d+)\n([^\n]*)\n(.*)$')
  return old == token and refuse(51, new, waiter, holder) or refuse(52)
end
local old, _, mode = string.match(found[1], '^(%d+) (%d+) (%d)')
if mode ~= '1' then
  return refuse(53)
end
local chosen, waiting = successor(lock, waiterCount, toSession, toOwner)
local waiter, waiterCoord, inSet, holdMode, holder, lockDelay = unpack(chosen or {})
if not waiter or inSet then
  return waiter and refuse(54) or refuse(55, waiting)
end
local deadline = rcall('ZSCORE', lock.leases, waiter)
rcall('ZREM', lock.holders, hid)
rcall('ZREM', lock.queue, waiter)
rcall('ZREM', lock.leases, waiter)
rcall('HDEL', lock.data, 'w:' .. waiter, 'q:' .. waiter, 'y:' .. waiter, 'excl', unpack(holderFields(hid)))
local from = {id = hid, hold = string.match(found[1], '^%d+ %d+ %d'), value = found[3] or ''}
local held = lockDelay and {'d:' .. holder, lockDelay} or {}
local new = grant(lock, holder, waiter, holdMode, deadline, held, from)
rcall('HSET', lock.data, 'moved', old .. '\n' .. new .. '\n' .. waiter .. '\n' .. holder)
-- A shared successor may let more shared waiters in (hand-on.lua); after an exclusive one nobody fits.
local granted = holdMode == '2' and handOn(lock, holderCount, waiterCount - 1, {}) or {}
if waiterCoord == coord or prefix == '' then
  table.insert(granted, 1, waiterCoord == coord and waiter or waiterCoord .. ' ' .. waiter)
  table.insert(granted, 2, new)
else
  rcall('PUBLISH', prefix .. waiterCoord, waiter .. '\n' .. new .. '\n' .. name)
end
return {51, granted, new, waiter, holder}
