package io.github.turnstilelocks.client.fencing;

import java.time.Instant;

/**
 * What a verified fencing proof says (docs/fencing.md). {@code fence} is the fencing token, an
 * unsigned 64-bit number (compare with {@link Long#compareUnsigned}); {@code caller} is the holder's
 * identity from mTLS or a bearer token ("" without security); {@code keyId} names the signing key.
 */
public record FencingClaims(
    String lock,
    long fence,
    String caller,
    String client,
    String session,
    String owner,
    Instant issuedAt,
    String issuer,
    String keyId) {}
