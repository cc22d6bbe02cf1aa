-- hand-on: after a hold ended or a waiter left, grants the head waiter, then each next waiter while it fits
-- (fits.lua; none after an exclusive grant), in queue order, passing over acquire-set members (multi-lock);
-- deletes the lock's keys (not fence or version) when nobody holds or waits (a lock-delay counts as a holder:
-- delay.lua; a waiter's lock-delay becomes its hold's). Twin: MemoryLock.handOn (memory-lock.ts): edit both.
-- A grant to this coordinator's waiter (or any, when prefix is '') is returned, another's published on its
-- grant channel as "waiter\ntoken\nname"; a set member that fits goes out the same way, token '' (re-run it).
-- Expects in scope: rcall, holders, data, queue, leases (keys), coord, name, prefix (ARGV), now, fits, grant
-- Defines: handOn(n, waiting, drop): deletes the data-hash fields in `drop` (and 'excl' when n = 0), then
--   hands on; returns {waiter, token, ...} (waiter as 'coordinator waiter' when another's). Also fits, grant
--- @include "fits"
--- @include "grant"
local function handOn(n, waiting, drop)
  local granted = {}
  if n == 0 and waiting == 0 then
    rcall('DEL', holders, data, queue, leases)
    return granted
  end
  drop[#drop + 1] = n == 0 and 'excl' or nil
  if #drop > 0 then
    rcall('HDEL', data, unpack(drop))
  end
  local head, skipped = waiting > 0 and rcall('ZRANGE', queue, 0, 0)[1], 0
  while head do
    local w = rcall('HMGET', data, 'w:' .. head, 'y:' .. head)
    local wc, wm, wl, wo = string.match(w[1], '^(%S+) (%d) (%d+) (.*)$')
    local set, h = wm > '2', string.match(head, '^[^:]*:') .. wo
    local fit = fits(set and (wm == '3' and '1' or '2') or wm, wl, n)
    if not (fit or set) then
      break
    end
    local held = w[2] and {'d:' .. h, w[2]} or {}
    local token = set and '' or grant(h, head, wm, rcall('ZSCORE', leases, head), held)
    if set then
      skipped = skipped + 1
    else
      rcall('ZREM', queue, head)
      rcall('ZREM', leases, head)
      rcall('HDEL', data, 'w:' .. head, 'q:' .. head, 'y:' .. head)
      n = n + 1
    end
    if fit and (wc == coord or prefix == '') then
      table.insert(granted, wc == coord and head or wc .. ' ' .. head)
      table.insert(granted, token)
    elseif fit then
      rcall('PUBLISH', prefix .. wc, head .. '\n' .. token .. '\n' .. name)
    end
    head = wm ~= '1' and rcall('ZRANGE', queue, skipped, skipped)[1]
  end
  return granted
end
