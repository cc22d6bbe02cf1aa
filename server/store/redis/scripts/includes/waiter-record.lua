-- waiter-record: a queued waiter's record "w:<waiter>" = "coordinator mode limit owner" (mode 3 or 4: an
-- acquire-set member, exclusive or shared) and its lock-delay "y:<waiter>" (layout: docs/data-model.md).
-- Expects in scope: rcall
-- Defines: waiterRecord(lock, waiter, fields) for waiter "session:request", in one read (none when the caller
--   has read its fields {w:, y:} with others: `fields`); returns its coordinator, whether it is a set member,
--   the mode its hold would have ('1' exclusive, '2' shared), its limit (text), the holder it becomes
--   ("session:owner") and its lock-delay ms (false: none)
local function waiterRecord(lock, waiter, fields)
  fields = fields or rcall('HMGET', lock.data, 'w:' .. waiter, 'y:' .. waiter)
  local coordinator, mode, limit, owner = string.match(fields[1], '^(%S+) (%d) (%d+) (.*)$')
  local inSet = mode > '2'
  local holdMode = inSet and (mode == '3' and '1' or '2') or mode
  return coordinator, inSet, holdMode, limit, string.match(waiter, '^[^:]*:') .. owner, fields[2]
end
