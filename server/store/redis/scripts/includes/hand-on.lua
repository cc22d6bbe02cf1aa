-- hand-on: after a hold ended or a waiter left, grants the lock to the head waiter, then to each next
-- waiter while it fits (fits.lua), in queue order; deletes the lock's keys (not fence or version) when
-- nobody holds or waits (a lock-delay in force counts as a holder: delay.lua). Its twin is
-- MemoryLock.handOn (server/store/memory/memory-lock.ts): change both.
-- A grant to this coordinator's waiter (or any, when prefix is '') is returned; another coordinator's
-- is published on its grant channel as "waiter\ntoken\nname".
-- Expects in scope: rcall, holders, data, queue, leases (keys), coord, name, prefix (ARGV), now,
--   fits, grant (included)
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
  if n == 0 then
    table.insert(drop, 'excl')
  end
  if #drop > 0 then
    rcall('HDEL', data, unpack(drop))
  end
  local head = waiting > 0 and rcall('ZRANGE', queue, 0, 0)[1]
  while head do
    local w = rcall('HMGET', data, 'w:' .. head, 'y:' .. head)
    local wc, wm, wl, wo = string.match(w[1], '^(%S+) (%d) (%d+) (.*)$')
    if not fits(wm, wl, n) then
      break
    end
    local h = string.match(head, '^[^:]*:') .. wo
    -- The waiter's lock-delay (delay.lua) becomes its hold's.
    local token = grant(h, head, wm, rcall('ZSCORE', leases, head), w[2] and {'d:' .. h, w[2]} or {})
    rcall('ZREM', queue, head)
    rcall('ZREM', leases, head)
    rcall('HDEL', data, 'w:' .. head, 'q:' .. head, 'y:' .. head)
    n = n + 1
    if wc == coord or prefix == '' then
      table.insert(granted, wc == coord and head or wc .. ' ' .. head)
      table.insert(granted, token)
    else
      rcall('PUBLISH', prefix .. wc, head .. '\n' .. token .. '\n' .. name)
    end
    -- An exclusive hold admits nobody else (fits.lua): no need to read the next head.
    head = wm == '2' and rcall('ZRANGE', queue, 0, 0)[1]
  end
  return granted
end
