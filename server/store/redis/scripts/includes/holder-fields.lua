-- holder-fields: the one list of a holder's fields in the lock's data hash (layout: docs/data-model.md):
-- its record h:, value v:, grant time a:, latest re-entry r:, lock-delay d: and latest release request p:
-- (request-release.lua), all removed together when its hold ends.
-- Expects in scope: nothing
-- Defines: holderFields(holder); returns a new table of those fields
--   {'h:' .. holder, 'v:' .. holder, 'a:' .. holder, 'r:' .. holder, 'd:' .. holder, 'p:' .. holder}
local function holderFields(holder)
  return {'h:' .. holder, 'v:' .. holder, 'a:' .. holder, 'r:' .. holder, 'd:' .. holder, 'p:' .. holder}
end
