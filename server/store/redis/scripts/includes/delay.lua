-- delay: lock-delay (docs/data-model.md). A hold granted with a delay keeps it in `d:<holder>` (a waiter's
-- in `y:<waiter>` until its grant). When such a hold ends without a release (expired, revoked) the lock is
-- delayed: the member DELAY of the holders set, scored with the delay's end, counts as an exclusive holder
-- ('excl' is set), so nobody is granted and re-checks fall due at its end; the data-hash field 'delay'
-- mirrors the end, so a script can read it beside fields it reads anyway (delay-expiry.lua).
-- Expects in scope: rcall, holders, data (keys), now
-- Defines: DELAY; delayEnd (the end in force as far as this run has seen, or nil);
--   holdOff(ms, from): delays the lock to from + ms (ms text, or nil/false: no delay) unless that has passed,
--     never shortening a later end; returns the holders added (1 when there was no delay, else 0)
--   lift(): drops the 'delay' and 'excl' fields and the keys' expiry (purge.lua removed the ended member)
--   withDelay(t, field, ms): appends field and ms to the list t when ms (text) is given; returns t
local DELAY = 'delay'
local delayEnd
local function holdOff(ms, from)
  local untilMs = ms and tonumber(from) + tonumber(ms) or 0
  local cur = untilMs > now and tonumber(rcall('ZSCORE', holders, DELAY))
  if untilMs <= now or (cur and cur >= untilMs) then
    delayEnd = cur and math.max(delayEnd or 0, cur) or delayEnd
    return 0
  end
  delayEnd = math.max(delayEnd or 0, untilMs)
  rcall('ZADD', holders, untilMs, DELAY)
  rcall('HSET', data, 'excl', '1', 'delay', untilMs)
  return cur and 0 or 1
end
local function lift()
  rcall('HDEL', data, 'excl', 'delay')
  rcall('PERSIST', holders)
  rcall('PERSIST', data)
end
local function withDelay(t, field, ms)
  if ms then
    table.insert(t, field)
    table.insert(t, ms)
  end
  return t
end
