package fencing

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// FenceWriteScript is the guard's script, the same text in the TypeScript, Go and Java guards.
// KEYS[1] the resource key, KEYS[2] its fence key; ARGV[1] the fence (decimal, compared as text:
// Lua's numbers lose precision above 2^53), ARGV[2] the value to SET. Returns {1, fence} when
// written, {0, highest} when refused.
const FenceWriteScript = `
local fence = ARGV[1]
local highest = redis.call('GET', KEYS[2])
if highest and (#highest > #fence or (#highest == #fence and highest > fence)) then
  return {0, highest}
end
redis.call('SET', KEYS[2], fence)
redis.call('SET', KEYS[1], ARGV[2])
return {1, fence}
`

var fenceWrite = redis.NewScript(FenceWriteScript)

// FenceKey is where the guard keeps the highest fence seen for key. On Redis Cluster give key a
// hash tag ({orders}:total) so both live in one slot.
func FenceKey(key string) string { return key + ":fence" }

// RedisGuard guards Redis keys with fencing proofs: Write verifies the proof in this process
// (Lua cannot verify Ed25519), then one script compares its fence with the highest stored for the
// key, refuses a lower one and does the SET, atomically.
type RedisGuard struct {
	Redis redis.Scripter
	Keys  KeySource
	// Issuer expected of proofs; empty: any.
	Issuer string
}

// Write sets key to value under proof, which must be a valid proof for lock whose fence is not
// lower than the highest key has seen. A refusal is an *Error (Stale, BadSignature, WrongLock, ...)
// and leaves key and its fence untouched.
func (g *RedisGuard) Write(ctx context.Context, proof, key string, value any, lock string) (*Claims, error) {
	claims, err := Verify(ctx, proof, g.Keys, VerifyOptions{Lock: lock, Issuer: g.Issuer})
	if err != nil {
		return nil, err
	}
	fence := strconv.FormatUint(claims.Fence, 10)
	reply, err := fenceWrite.Run(ctx, g.Redis, []string{key, FenceKey(key)}, fence, value).Slice()
	if err != nil {
		return nil, fmt.Errorf("fencing: guarded write of %q: %w", key, err)
	}
	if ok, _ := reply[0].(int64); ok != 1 {
		return nil, refuse(Stale, "fence %s of lock %q is lower than %v, the highest %q has seen", fence, claims.Lock, reply[1], key)
	}
	return claims, nil
}
