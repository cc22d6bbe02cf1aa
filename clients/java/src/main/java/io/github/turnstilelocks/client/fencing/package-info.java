/**
 * Verifies Turnstile's signed fencing proofs and guards resources with them (docs/fencing.md).
 *
 * <p>A coordinator started with {@code serve --fencing-key} puts a proof into every grant ({@link
 * io.github.turnstilelocks.client.Lock#fencingProof()}): a compact JWS, EdDSA with an Ed25519 key,
 * the key's kid in the header. {@link FencingProofs#verify} checks one against the coordinators'
 * published keys ({@link JwksFetcher} reads them from {@code GET /.well-known/jwks.json}); Nimbus
 * JOSE+JWT parses the JWS and the keys and the JDK's Ed25519 checks the signature. {@link
 * RedisFenceGuard} (with Jedis) makes "refuse stale or forged" one call for a Redis key.
 */
package io.github.turnstilelocks.client.fencing;
