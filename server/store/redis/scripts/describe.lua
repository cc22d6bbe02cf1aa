-- describe: one lock's state and the version of the last holder change it includes, read in one
-- step (a Watch snapshot is exact at that version). Changes nothing: entries whose lease has ended
-- are left out (the next operation on the lock purges them and publishes the expiry).
-- KEYS: 1 holders, 2 data, 3 queue, 4 leases, 5 version (layout: docs/data-model.md)
-- ARGV: none
-- Returns {version ('0' when the counter is absent), shared limit in force or '', holders, waiters, delay}
--   holders: {holder, "token count mode waiter", lease ms left, value, ms held, asked, ...} by lease deadline
--   (asked: the release request "requester\nreason" of request-release.lua, '' when none)
--   waiters: {waiter, "coord mode limit owner", lease ms left, ms waited, set names, score, ...} in queue
--   order (score: the queue score, queue-rank.lua's, which tells the priority)
--   (mode 3, 4: an acquire-set member, exclusive or shared; set names: its names joined by "\n", else '')
--   (ms held / waited: since the grant / the first queueing, on the Redis clock; 0 when not recorded)
--   delay: ms until the lock-delay in force ends (delay.lua), -1 when none
local rcall = redis.call
local holders, data, queue, leases, version = unpack(KEYS)
--- @include "clock"
local holderList, waiterList, delay = {}, {}, -1
local live = rcall('ZRANGEBYSCORE', holders, '(' .. now, '+inf', 'WITHSCORES')
for at = 1, #live, 2 do
  local holder = live[at]
  -- The lock-delay's member of the holders set (delay.lua) holds nothing: it is the delay's end.
  if holder == 'delay' then
    delay = live[at + 1] - now
  else
    local record = rcall('HGET', data, 'h:' .. holder)
    local value = rcall('HGET', data, 'v:' .. holder) or ''
    local since = tonumber(rcall('HGET', data, 'a:' .. holder) or now)
    local asked = rcall('HGET', data, 'p:' .. holder) or ''
    for _, field in ipairs({holder, record, live[at + 1] - now, value, math.max(0, now - since), asked}) do
      table.insert(holderList, field)
    end
  end
end
local queued = rcall('ZRANGE', queue, 0, -1, 'WITHSCORES')
for at = 1, #queued, 2 do
  local waiter = queued[at]
  local lease = tonumber(rcall('ZSCORE', leases, waiter))
  if lease and lease > now then
    local since = tonumber(rcall('HGET', data, 'q:' .. waiter) or now)
    local record = rcall('HGET', data, 'w:' .. waiter)
    local setNames = string.match(record, '^%S+ [34]') and rcall('HGET', data, 's:' .. waiter) or ''
    local waited = math.max(0, now - since)
    for _, field in ipairs({waiter, record, lease - now, waited, setNames, queued[at + 1]}) do
      table.insert(waiterList, field)
    end
  end
end
return {rcall('GET', version) or '0', rcall('HGET', data, 'limit') or '', holderList, waiterList, delay}
