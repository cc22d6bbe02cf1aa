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
local holders, data, queue, leases, fence, ver = unpack(KEYS)
local session, owner, request, how, coord, retain, name, prefix, chan, publish, floors = unpack(ARGV)
local hid = session .. ':' .. owner
local wid = session .. ':' .. request
--- @include "purge"
--- @include "hand-on"
local code, left = 12, 0
local found = rcall('HMGET', data, 'h:' .. hid, 'delay')
local rec = found[1]
local token, count, hmode, gw
if rec then
  token, count, hmode, gw = string.match(rec, '^(%d+) (%d+) (%d) (.*)$')
end
if request ~= '' then
  local w = rcall('HGET', data, 'w:' .. wid)
  if w and (how == 'cancel' or string.match(w, '^%S+') == coord) then
    code = 13
    waiting = waiting - rcall('ZREM', queue, wid)
    rcall('ZREM', leases, wid)
    rcall('HDEL', data, 'w:' .. wid, 'v:' .. hid, 'q:' .. wid, 'y:' .. wid, 's:' .. wid)
  elseif how == 'cancel' and rec and gw == wid then
    code = 14
  else
    code = 15
  end
elseif rec then
  code = 11
  left = how == 'all' and 0 or tonumber(count) - 1
  if left > 0 then
    rcall('HSET', data, 'h:' .. hid, token .. ' ' .. left .. ' ' .. hmode .. ' ' .. gw)
  end
end
local drop = {}
if (code == 11 and left == 0) or code == 14 then
  n = n - rcall('ZREM', holders, hid)
  event('released', hid, 0)
  -- Removed after the event, which reads them; hand-on deletes them with the keys when the lock is idle.
  drop = holderFields(hid)
end
local granted = handOn(n, waiting, drop)
-- A lock-delay in force (delay.lua) grants nobody, so n and waiting still hold.
rest(n, waiting, found[2])
return {code, left, granted}
