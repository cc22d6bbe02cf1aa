-- release: let go of one claim, then hand the lock to the head waiter(s) (hand-on.lua). With request = ''
-- it drops one hold of (session, owner) ('one') or all ('all'). With a request: 'cancel' withdraws that
-- waiter, or releases its grant if the grant raced the cancel; 'abandon' (broken stream) withdraws it only
-- while it is attached to this coordinator and never releases a grant. Holder changes (expired, released,
-- acquired) are versioned and published by event.lua.
-- KEYS: 1 holders, 2 data, 3 queue, 4 leases, 5 fence, 6 version (layout: docs/data-model.md)
-- ARGV: session, owner, request or '', how ('one', 'all', 'cancel', 'abandon'), coordinator id,
--   fence retain ms, lock name, grant channel prefix ('': return other coordinators' grants unpublished,
--   as 'coordinator waiter'), event channel, publish, floors (as in acquire.lua)
-- Returns {code, holds left, grants}; grants: {waiter, token, ...} to this coordinator's waiters (and
--   others' when prefix is '')
--   code 11 RELEASED, 12 NOT_HELD, 13 WITHDRAWN (waiter left the queue),
--   14 GRANT_RELEASED (raced grant let go), 15 GONE (no such waiter or grant)
local rcall = redis.call
local session, owner, request, how, coord, retain, name, prefix, chan, publish, floors = unpack(ARGV)
local hid, wid = session .. ':' .. owner, session .. ':' .. request
--- @include "lock"
--- @include "purge"
--- @include "hand-on"
local lock = lockOf(KEYS, 1, chan)
local holderCount, waiterCount = purge(lock)
local code, left = 12, 0
-- A plain release reads the queue head's record in its own HMGET, for hand-on (one call, not two).
local head = request == '' and waiterCount > 0 and rcall('ZRANGE', lock.queue, 0, 0)[1] or ''
local found = rcall('HMGET', lock.data, 'h:' .. hid, 'delay', 'w:' .. head, 'y:' .. head)
local token, count, heldMode, grantedTo = string.match(found[1] or '', '^(%d+) (%d+) (%d) (.*)$')
if request ~= '' then
  local entry = rcall('HGET', lock.data, 'w:' .. wid)
  if entry and (how == 'cancel' or string.match(entry, '^%S+') == coord) then
    code = 13
    waiterCount = waiterCount - rcall('ZREM', lock.queue, wid)
    rcall('ZREM', lock.leases, wid)
    rcall('HDEL', lock.data, 'w:' .. wid, 'v:' .. hid, 'q:' .. wid, 'y:' .. wid, 's:' .. wid)
  elseif how == 'cancel' and found[1] and grantedTo == wid then
    code = 14
  else
    code = 15
  end
elseif found[1] then
  code = 11
  left = how == 'all' and 0 or tonumber(count) - 1
  if left > 0 then
    rcall('HSET', lock.data, 'h:' .. hid, token .. ' ' .. left .. ' ' .. heldMode .. ' ' .. grantedTo)
  end
end
local drop = {}
if (code == 11 and left == 0) or code == 14 then
  holderCount = holderCount - rcall('ZREM', lock.holders, hid)
  event(lock, 'released', hid, 0)
  -- Removed after the event, which reads them; hand-on deletes them with the keys when the lock is idle.
  drop = holderFields(hid)
end
local granted = handOn(lock, holderCount, waiterCount, drop, head ~= '' and {found[3], found[4], head})
-- A lock-delay in force (delay.lua) grants nobody, so the counts still hold.
rest(lock, holderCount, waiterCount, found[2])
return {code, left, granted}
