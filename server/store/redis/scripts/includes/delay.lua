-- delay: lock-delay (docs/data-model.md). A hold granted with a delay keeps it in `d:<holder>` (a waiter's
-- in `y:<waiter>` until its grant). When such a hold ends without a release (expired, revoked) the lock is
-- delayed: the member DELAY of the holders set, scored with the delay's end, counts as an exclusive holder
-- ('excl' is set), so nobody is granted and re-checks fall due at its end; the data-hash field 'delay'
-- mirrors the end, so a script can read it beside fields it reads anyway (delay-expiry.lua).
-- Expects in scope: rcall, now
-- Defines: DELAY; holdOff(lock, ms, from): delays the lock to from + ms (ms text, or nil/false: no delay)
--     unless that has passed, never shortening a later end; notes the end in force in lock.delayEnd;
--     returns the holders added (1 when there was no delay, else 0)
--   lift(lock): drops the 'delay' and 'excl' fields and the keys' expiry (purge.lua removed the ended member)
--   withDelay(fields, field, ms): appends field and ms to the list fields when ms (text) is given, not '0';
--     returns it
local DELAY = 'delay'
local function holdOff(lock, ms, from)
  local untilMs = ms and tonumber(from) + tonumber(ms) or 0
  local current = untilMs > now and tonumber(rcall('ZSCORE', lock.holders, DELAY))
  if untilMs <= now or (current and current >= untilMs) then
    lock.delayEnd = current and math.max(lock.delayEnd or 0, current) or lock.delayEnd
    return 0
  end
  lock.delayEnd = math.max(lock.delayEnd or 0, untilMs)
  rcall('ZADD', lock.holders, untilMs, DELAY)
  rcall('HSET', lock.data, 'excl', '1', 'delay', untilMs)
  return current and 0 or 1
end
local function lift(lock)
  rcall('HDEL', lock.data, 'excl', 'delay')
  rcall('PERSIST', lock.holders)
  rcall('PERSIST', lock.data)
end
local function withDelay(fields, field, ms)
  if ms and ms ~= '0' then
    table.insert(fields, field)
    table.insert(fields, ms)
  end
  return fields
end
