/**
 * The Redis guard's script, the same text in the TypeScript, Go and Java guards (a test compares
 * them). It compares a verified proof's fence with the highest one stored for the resource and does
 * the write in the same step: nothing can slip between the check and the write.
 *
 * KEYS[1] the resource key (a string: SET), KEYS[2] its fence key (the highest fence seen).
 * ARGV[1] the fence (decimal, no leading zeros, up to 20 digits: compared as text, since Lua's
 * numbers lose precision above 2^53), ARGV[2] the value to SET.
 * Returns {1, fence} when written (the fence is now the highest), {0, highest} when refused.
 */
export const FENCE_WRITE_SCRIPT = `
local fence = ARGV[1]
local highest = redis.call('GET', KEYS[2])
if highest and (#highest > #fence or (#highest == #fence and highest > fence)) then
  return {0, highest}
end
redis.call('SET', KEYS[2], fence)
redis.call('SET', KEYS[1], ARGV[2])
return {1, fence}
`;
