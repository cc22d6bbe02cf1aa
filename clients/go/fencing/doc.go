// Package fencing verifies Turnstile's signed fencing proofs and guards resources with them
// (docs/fencing.md in the repository).
//
// A coordinator started with `serve --fencing-key` puts a proof into every grant
// (turnstile.Lock.FencingProof): a compact JWS, EdDSA with an Ed25519 key, the key's kid in the
// header, and claims binding the lock name, the fencing token and the holder. Verify checks one
// against the coordinators' published keys (a JWKSFetcher reads them from GET
// /.well-known/jwks.json on the coordinator's --http listener, or StaticKeys holds a set). It uses
// go-jose (github.com/go-jose/go-jose/v4).
//
// RedisGuard makes "refuse stale or forged" one call for a Redis key: the proof is verified in this
// process, then one script compares its fence with the highest stored for the key and does the
// write, atomically. The script is the same in the TypeScript and Java guards.
package fencing
