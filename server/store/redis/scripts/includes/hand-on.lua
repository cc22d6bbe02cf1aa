-- hand-on: after a hold ended or a waiter left, grants the head waiter, then each next waiter while it fits
-- (fits.lua; none after an exclusive grant), in queue order, passing over acquire-set members (multi-lock);
-- deletes the lock's keys (not fence or version) when nobody holds or waits (a lock-delay counts as a holder:
-- delay.lua; a waiter's lock-delay becomes its hold's). Twin: MemoryLock.handOn (memory-lock.ts): edit both.
-- Expects in scope: rcall, coord, name, prefix (ARGV), now
-- Defines: handOn(lock, holderCount, waiterCount, drop): deletes the data-hash fields in the list drop (and
--   'excl' when nobody holds), then hands on; returns {waiter, token, ...}: this coordinator's grants (all,
--   others' as 'coordinator waiter', when prefix is ''); others' go out on their coordinator's grant channel
--   as "waiter\ntoken\nname" (a set member that fits: token '', re-run it). Also fits.lua's, grant.lua's
--- @include "fits"
--- @include "grant"
--- @include "waiter-record"
local function handOn(lock, holderCount, waiterCount, drop)
  local granted = {}
  if holderCount == 0 and waiterCount == 0 then
    rcall('DEL', lock.holders, lock.data, lock.queue, lock.leases)
    return granted
  end
  drop[#drop + 1] = holderCount == 0 and 'excl' or nil
  if #drop > 0 then
    rcall('HDEL', lock.data, unpack(drop))
  end
  local head, skipped = waiterCount > 0 and rcall('ZRANGE', lock.queue, 0, 0)[1], 0
  while head do
    local waiterCoord, inSet, mode, waiterLimit, holder, lockDelay = waiterRecord(lock, head)
    local fit = fits(lock, mode, waiterLimit, holderCount)
    if not (fit or inSet) then
      break
    end
    local held = lockDelay and {'d:' .. holder, lockDelay} or {}
    local token = inSet and '' or grant(lock, holder, head, mode, rcall('ZSCORE', lock.leases, head), held)
    if inSet then
      skipped = skipped + 1
    else
      rcall('ZREM', lock.queue, head)
      rcall('ZREM', lock.leases, head)
      rcall('HDEL', lock.data, 'w:' .. head, 'q:' .. head, 'y:' .. head)
      holderCount = holderCount + 1
    end
    if fit and (waiterCoord == coord or prefix == '') then
      table.insert(granted, waiterCoord == coord and head or waiterCoord .. ' ' .. head)
      table.insert(granted, token)
    elseif fit then
      rcall('PUBLISH', prefix .. waiterCoord, head .. '\n' .. token .. '\n' .. name)
    end
    -- After an exclusive grant nobody else fits (a set member's turn passed over, the next one may).
    head = (inSet or mode ~= '1') and rcall('ZRANGE', lock.queue, skipped, skipped)[1]
  end
  return granted
end
