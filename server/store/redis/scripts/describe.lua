-- describe: one lock's state and the version of the last holder change it includes, read in one
-- step (a Watch snapshot is exact at that version). Changes nothing: entries whose lease has ended
-- are left out (the next operation on the lock purges them and publishes the expiry).
-- KEYS: 1 holders, 2 data, 3 queue, 4 leases, 5 version (layout: acquire.lua)
-- ARGV: none
-- Returns {version ('0' when the counter is absent), shared limit in force or '', holders, waiters}
--   holders: {holder, "token count mode waiter", lease ms left, value, ...} by lease deadline
--   waiters: {waiter, "coord mode limit owner", lease ms left, ...} in queue order
local rcall = redis.call
local holders, data, queue, leases, ver = unpack(KEYS)
local t = rcall('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local hs, ws = {}, {}
local live = rcall('ZRANGEBYSCORE', holders, '(' .. now, '+inf', 'WITHSCORES')
for i = 1, #live, 2 do
  local h = live[i]
  local rec, value = rcall('HGET', data, 'h:' .. h), rcall('HGET', data, 'v:' .. h) or ''
  for _, x in ipairs({h, rec, live[i + 1] - now, value}) do table.insert(hs, x) end
end
for _, w in ipairs(rcall('ZRANGE', queue, 0, -1)) do
  local lease = tonumber(rcall('ZSCORE', leases, w))
  if lease and lease > now then
    for _, x in ipairs({w, rcall('HGET', data, 'w:' .. w), lease - now}) do table.insert(ws, x) end
  end
end
return {rcall('GET', ver) or '0', rcall('HGET', data, 'limit') or '', hs, ws}
