-- renew: the keepalive of one session on one lock. Pushes the lease deadline
-- of each listed holder and waiter to now + ttl; an entry whose lease already
-- ended is not revived (its holder must be told it lost the lock).
-- KEYS: 1 holders, 2 waiter leases (layout: acquire.lua)
-- ARGV: session, ttl ms, holder count H, H owners, then request ids
-- Returns {s1, s2, ...} one per owner, then one per request, in ARGV order:
--   1 renewed, 0 not held / not queued (expired, granted or never there)
local rcall = redis.call
local holders, leases = KEYS[1], KEYS[2]
local session, ttl, count = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])

local t = rcall('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 4, #ARGV do
  local set = (i < 4 + count) and holders or leases
  local member = session .. ':' .. ARGV[i]
  local deadline = tonumber(rcall('ZSCORE', set, member))
  if deadline and deadline > now then
    rcall('ZADD', set, 'XX', now + ttl, member)
    table.insert(out, 1)
  else
    table.insert(out, 0)
  end
end
return out
