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
-- cursor: where the current lock's ARGV starts (its holder count).
local statuses, cursor = {}, 4
local lockKeys = #KEYS - #KEYS % 4
for key = 1, lockKeys, 4 do
  local holders, leases, fence, data = unpack(KEYS, key, key + 3)
  local holderCount, waiterCount = tonumber(ARGV[cursor]), tonumber(ARGV[cursor + 1])
  local held, firstPair = false, cursor + 2 + holderCount
  for ownerArg = cursor + 2, firstPair - 1 do
    local hid = session .. ':' .. ARGV[ownerArg]
    local renewed = push(holders, hid)
    held = held or renewed
    table.insert(statuses, renewed and string.match(rcall('HGET', data, 'h:' .. hid), '^%d+ %d+') or 0)
  end
  for pair = firstPair, firstPair + 2 * waiterCount - 1, 2 do
    local status = 0
    if push(leases, session .. ':' .. ARGV[pair]) then
      status = 1
    elseif push(holders, session .. ':' .. ARGV[pair + 1]) then
      status = 2
      held = true
    end
    table.insert(statuses, status)
  end
  if held then
    rcall('PEXPIRE', fence, ttl + retain)
  end
  cursor = firstPair + 2 * waiterCount
end
if lockKeys < #KEYS then
  table.insert(statuses, rcall('PEXPIRE', KEYS[#KEYS], ttl))
end
return statuses
