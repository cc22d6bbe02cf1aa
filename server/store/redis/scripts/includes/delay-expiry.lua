-- delay-expiry: while a lock-delay (delay.lua) is all a lock has, the lock's keys expire at its end, so a
-- delayed lock nobody touches again cleans itself up; once a waiter joins, they no longer expire. A script
-- learns of a delay from the data-hash field 'delay', read beside fields it reads anyway.
-- Expects in scope: rcall
-- Defines: rest(lock, holderCount, waiterCount, field): notes the 'delay' field the script read (nil/false:
--     none); with a delay in force and nothing else left (holderCount 1, no waiter), the keys expire at its
--     end
--   keep(lock): a new waiter joins the lock: when delayed, its keys no longer expire
--   Also what delay.lua defines
--- @include "delay"
local function rest(lock, holderCount, waiterCount, field)
  lock.delayEnd = field and math.max(lock.delayEnd or 0, tonumber(field)) or lock.delayEnd
  if lock.delayEnd and holderCount == 1 and waiterCount == 0 then
    rcall('PEXPIREAT', lock.holders, lock.delayEnd)
    rcall('PEXPIREAT', lock.data, lock.delayEnd)
  end
end
local function keep(lock)
  if lock.delayEnd then
    rcall('PERSIST', lock.holders)
    rcall('PERSIST', lock.data)
  end
end
