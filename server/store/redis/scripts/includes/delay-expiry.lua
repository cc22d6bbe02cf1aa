-- delay-expiry: while a lock-delay (delay.lua) is all a lock has, the lock's keys expire at its end, so a
-- delayed lock nobody touches again cleans itself up; once a waiter joins, they no longer expire. A script
-- learns of a delay from the data-hash field 'delay', read beside fields it reads anyway.
-- Expects in scope: rcall, holders, data (keys)
-- Defines: rest(n, waiting, field): notes the 'delay' field the script read (nil/false: none); with a delay
--     in force and nothing else left (n = 1, no waiter), the keys expire at its end
--   keep(): a new waiter joins the lock: when delayed, its keys no longer expire
--   Also what delay.lua defines
--- @include "delay"
local function rest(n, waiting, field)
  delayEnd = field and math.max(delayEnd or 0, tonumber(field)) or delayEnd
  if delayEnd and n == 1 and waiting == 0 then
    rcall('PEXPIREAT', holders, delayEnd)
    rcall('PEXPIREAT', data, delayEnd)
  end
end
local function keep()
  if delayEnd then
    rcall('PERSIST', holders)
    rcall('PERSIST', data)
  end
end
