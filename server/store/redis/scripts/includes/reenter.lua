-- reenter: acquire.lua's answer when the owner already holds the name. A re-sent request (same session
-- and request id) that was the grant (the record's waiter) or this hold's latest re-entry (`r:<holder>` =
-- "token request", the token binding it to this very hold) gets the hold's count as it stands, never one
-- more; any other request counts one more hold (same token). Only the latest re-entry is remembered: a
-- re-run of an older one counts again (over, never under: docs/data-model.md).
-- Expects in scope: rcall, hid, wid, mode, ttl (ARGV), now
-- Defines: reenter(lock, record) for hid's record "token count mode waiter"; returns acquire's reply:
--   {1, token, count} GRANTED, or {5} UPGRADE (a shared holder asked exclusive)
local function reenter(lock, record)
  local token, count, heldMode, grantedTo = string.match(record, '^(%d+) (%d+) (%d) (.*)$')
  if grantedTo == wid then
    rcall('ZADD', lock.holders, now + ttl, hid)
    return {1, token, tonumber(count)}
  end
  local latest = token .. ' ' .. wid
  if rcall('HGET', lock.data, 'r:' .. hid) == latest then
    return {1, token, tonumber(count)}
  end
  if heldMode == '2' and mode == '1' then
    return {5}
  end
  count = tonumber(count) + 1
  local updated = token .. ' ' .. count .. ' ' .. heldMode .. ' ' .. grantedTo
  rcall('HSET', lock.data, 'h:' .. hid, updated, 'r:' .. hid, latest)
  return {1, token, count}
end
