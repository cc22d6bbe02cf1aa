-- renew: the keepalive of one session on its locks, all of them in one call (on Redis Cluster: those of
-- one hash slot). On each lock, pushes the lease deadline of each listed holder and waiter to now + ttl;
-- an entry whose lease already ended is not revived (its holder must be told it lost the lock). A waiter
-- granted since the coordinator last heard of it is a holder now: its hold is renewed in its place, so an
-- acknowledged keepalive always covers it. The fencing counter is kept `retain` ms past every renewed hold.
-- Optionally touches the session record too (one Redis or a Sentinel master; never on Cluster, where its
-- key hashes elsewhere): pushes its expiry to ttl ms from now, and never creates one that had expired.
-- KEYS: per lock: 1 holders, 2 waiter leases, 3 fence, 4 data (layout: docs/data-model.md);
--       then, optionally, the session record (<prefix>:session:{id}): a count of KEYS of 4n + 1
-- ARGV: session, ttl ms, fence retain ms, then per lock in KEYS order: holder count H, waiter count W,
--       H owners, then W pairs: request, owner
-- Returns {s1, s2, ...}: per lock in KEYS order, one per owner, then one per pair, in ARGV order:
--   owners: "token count" of the renewed hold, or 0 (not held: expired or never)
--   pairs:  1 renewed, 0 not queued (expired or never there),
--           2 no longer queued but granted: the hold was renewed in its place
--   then, with the session record key, one last: 1 its expiry pushed, 0 it had expired (not recreated)
local rcall = redis.call
local session, ttl, retain = unpack(ARGV, 1, 3)
--- @include "clock"
local function push(set, member)
  local deadline = tonumber(rcall('ZSCORE', set, member))
  if not deadline or deadline <= now then
    return false
  end
  rcall('ZADD', set, 'XX', now + ttl, member)
  return true
end
local out, a = {}, 4
local locks = #KEYS - #KEYS % 4
for k = 1, locks, 4 do
  local holders, leases, fence, data = unpack(KEYS, k, k + 3)
  local h, w = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local held, first = false, a + 2 + h
  for i = a + 2, first - 1 do
    local hid = session .. ':' .. ARGV[i]
    local ok = push(holders, hid)
    held = held or ok
    table.insert(out, ok and string.match(rcall('HGET', data, 'h:' .. hid), '^%d+ %d+') or 0)
  end
  for i = first, first + 2 * w - 1, 2 do
    local status = 0
    if push(leases, session .. ':' .. ARGV[i]) then
      status = 1
    elseif push(holders, session .. ':' .. ARGV[i + 1]) then
      status = 2
      held = true
    end
    table.insert(out, status)
  end
  if held then
    rcall('PEXPIRE', fence, ttl + retain)
  end
  a = first + 2 * w
end
if locks < #KEYS then
  table.insert(out, rcall('PEXPIRE', KEYS[#KEYS], ttl))
end
return out
