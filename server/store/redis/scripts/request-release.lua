-- request-release: asks every live holder of a lock to let go (docs/elections.md): records the request
-- on each holder as `p:<holder>` = "requester\nreason" (the latest wins; it ends with the hold:
-- holder-fields.lua) and broadcasts "holder\nname\nrequester\nreason" on the release-request channel,
-- which every coordinator reads (each tells the sessions it serves). Nothing else changes: holders decide.
-- KEYS: 1 holders, 2 data (layout: docs/data-model.md)
-- ARGV: lock name, requester, reason, release-request channel
-- Returns {61, holders asked} ASKED;  {62, 0} NO_HOLDER: nobody holds a live lease on the lock
local rcall = redis.call
local name, requester, reason, channel = unpack(ARGV)
--- @include "clock"
local asked = 0
for _, holder in ipairs(rcall('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')) do
  -- The lock-delay's member of the holders set (delay.lua) is nobody.
  if holder ~= 'delay' then
    asked = asked + 1
    rcall('HSET', KEYS[2], 'p:' .. holder, requester .. '\n' .. reason)
    rcall('PUBLISH', channel, holder .. '\n' .. name .. '\n' .. requester .. '\n' .. reason)
  end
end
return asked > 0 and {61, asked} or {62, 0}
