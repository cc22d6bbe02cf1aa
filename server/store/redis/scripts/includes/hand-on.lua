-- hand-on: after a hold ended or a waiter left, grants the head waiter, then each next waiter while it fits
-- (fits.lua; none after an exclusive grant), in queue order, passing over acquire-set members (multi-lock);
-- deletes the lock's keys (not fence or version) when nobody holds or waits (a lock-delay counts as a holder:
-- delay.lua; a waiter's lock-delay becomes its hold's). Twin: MemoryLock.handOn (memory-lock.ts): edit both.
-- Expects in scope: rcall, coord, name, prefix (ARGV), now
-- Defines: handOn(lock, holderCount, waiterCount, drop, first): removes the fields in list drop (and 'excl'
--   if nobody holds) in the first grant's HDEL; first: the head {w:, y:, waiter} if the caller read it.
--   Returns {waiter, token, ...}: this coordinator's grants (all, others' as 'coord waiter', if prefix '');
--   others' on their coordinator's channel: "waiter\ntoken\nname" (set member: token ''). Also fits', grant's
--- @include "fits"
--- @include "grant"
--- @include "waiter-record"
local function handOn(lock, holderCount, waiterCount, drop, first)
  local granted = {}
  if holderCount == 0 and waiterCount == 0 then
    rcall('DEL', lock.holders, lock.data, lock.queue, lock.leases)
    return granted
  end
  drop[#drop + 1] = holderCount == 0 and 'excl' or nil
  local head, skipped = first and first[3] or waiterCount > 0 and rcall('ZRANGE', lock.queue, 0, 0)[1], 0
  while head do
    local waiterCoord, inSet, mode, waiterLimit, holder, lockDelay = waiterRecord(lock, head, first)
    local fit, token = fits(lock, mode, waiterLimit, holderCount), ''
    if not (fit or inSet) then
      break
    end
    first, skipped = nil, skipped + (inSet and 1 or 0)
    if not inSet then
      -- The ended hold's fields leave in the waiter's HDEL, before its hold (maybe the same holder's) is set.
      drop[#drop + 1], drop[#drop + 2], drop[#drop + 3] = 'w:' .. head, 'q:' .. head, 'y:' .. head
      rcall('HDEL', lock.data, unpack(drop))
      local held = lockDelay and {'d:' .. holder, lockDelay} or {}
      token = grant(lock, holder, head, mode, rcall('ZSCORE', lock.leases, head), held)
      rcall('ZREM', lock.queue, head)
      rcall('ZREM', lock.leases, head)
      drop, holderCount = {}, holderCount + 1
    end
    if fit and (waiterCoord == coord or prefix == '') then
      table.insert(granted, waiterCoord == coord and head or waiterCoord .. ' ' .. head)
      table.insert(granted, token)
    elseif fit then
      rcall('PUBLISH', prefix .. waiterCoord, head .. '\n' .. token .. '\n' .. name)
    end
    head = (inSet or mode ~= '1') and rcall('ZRANGE', lock.queue, skipped, skipped)[1]
  end
  if #drop > 0 then
    rcall('HDEL', lock.data, unpack(drop))
  end
  return granted
end
