-- set-name: acquire-set.lua's step from one name of the set to the next: the script's key and channel
-- locals point at name i's, and purged() purges that name as acquire.lua does before it decides.
-- Expects in scope: rcall, the locals holders, data, queue, leases, fence, ver, chan (assigned here),
--   publish (ARGV), KEYS (6 per name), ARGV (after the 11th: mode, limit, event channel per name)
-- Defines: use(i), which switches to name i and returns its mode and limit; purged(), which purges the
--   current name (purge.lua), deletes its idle hash or stale 'excl', and returns n, its live holders.
--   Also what fits.lua, grant.lua and holder-fields.lua define (loud: reset per name)
--- @include "fits"
--- @include "grant"
--- @include "holder-fields"
local function use(i)
  holders, data, queue, leases, fence, ver = unpack(KEYS, i * 6 - 5, i * 6)
  chan, loud = ARGV[11 + i * 3], publish ~= 'watched' or nil
  return ARGV[9 + i * 3], ARGV[10 + i * 3]
end
local function purged()
  --- @include "purge"
  if n + waiting == 0 then
    rcall('DEL', data)
  elseif n == 0 then
    rcall('HDEL', data, 'excl')
  end
  return n
end
