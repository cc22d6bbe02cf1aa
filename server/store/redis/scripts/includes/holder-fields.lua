-- holder-fields: the one list of a holder's fields in the lock's data hash (layout: docs/data-model.md):
-- its record h:, value v:, grant time a: and latest re-entry r:, all removed together when its hold ends.
-- Expects in scope: nothing
-- Defines: holderFields(h) for holder h; returns a new table {'h:' .. h, 'v:' .. h, 'a:' .. h, 'r:' .. h}
local function holderFields(h)
  return {'h:' .. h, 'v:' .. h, 'a:' .. h, 'r:' .. h}
end
