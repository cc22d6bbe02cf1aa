-- holder-fields: the one list of a holder's fields in the lock's data hash (layout: docs/data-model.md):
-- its record h:, value v:, grant time a:, latest re-entry r: and lock-delay d:, all removed together when its
-- hold ends.
-- Expects in scope: nothing
-- Defines: holderFields(h) for holder h; returns a new table of those fields
--   {'h:' .. h, 'v:' .. h, 'a:' .. h, 'r:' .. h, 'd:' .. h}
local function holderFields(h)
  return {'h:' .. h, 'v:' .. h, 'a:' .. h, 'r:' .. h, 'd:' .. h}
end
