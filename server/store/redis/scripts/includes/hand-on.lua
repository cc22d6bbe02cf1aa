-- hand-on: after a hold ended or a waiter left, grants the lock to the head waiter, then to each next waiter
-- while it fits (fits.lua), in queue order, passing over acquire-set members (mode 3, 4: docs/multi-lock.md);
-- deletes the lock's keys (not fence or version) when nobody holds or waits. Its twin is MemoryLock.handOn
-- (server/store/memory/memory-lock.ts): change both. A grant to this coordinator's waiter (or any, when
-- prefix is '') is returned; another's is published on its grant channel as "waiter\ntoken\nname".
-- A set member that fits is never granted here: it goes out the same way with token '' (re-run its set).
-- Expects in scope: rcall, holders, data, queue, leases (keys), coord, name, prefix (ARGV), now, fits, grant
-- Defines: handOn(n, waiting, drop) for n holders and `waiting` waiters left; first deletes the data-hash
--   fields listed in `drop` (and 'excl' when n = 0). Returns {waiter, token, ...} (waiter as
--   'coordinator waiter' when it is another coordinator's). Also what fits.lua and grant.lua define
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
    local wc, wm, wl, wo = string.match(rcall('HGET', data, 'w:' .. head), '^(%S+) (%d) (%d+) (.*)$')
    local set, h = wm > '2', string.match(head, '^[^:]*:') .. wo
    local fit = fits(set and (wm == '3' and '1' or '2') or wm, wl, n)
    if not (fit or set) then
      break
    end
    local token = set and '' or grant(h, head, wm, rcall('ZSCORE', leases, head), {})
    if set then
      skipped = skipped + 1
    else
      rcall('ZREM', queue, head)
      rcall('ZREM', leases, head)
      rcall('HDEL', data, 'w:' .. head, 'q:' .. head)
      n = n + 1
    end
    if fit and (wc == coord or prefix == '') then
      table.insert(granted, wc == coord and head or wc .. ' ' .. head)
      table.insert(granted, token)
    elseif fit then
      rcall('PUBLISH', prefix .. wc, head .. '\n' .. token .. '\n' .. name)
    end
    -- An exclusive hold admits nobody else (fits.lua): no need to read the next head.
    head = wm ~= '1' and rcall('ZRANGE', queue, skipped, skipped)[1]
  end
  return granted
end
