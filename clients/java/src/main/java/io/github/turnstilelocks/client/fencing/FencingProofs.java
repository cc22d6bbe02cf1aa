package io.github.turnstilelocks.client.fencing;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSObject;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.OctetKeyPair;
import java.io.IOException;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.text.ParseException;
import java.time.Instant;
import java.util.Map;
import java.util.regex.Pattern;

/** Verifies fencing proofs (docs/fencing.md). */
public final class FencingProofs {
  // The DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key (the JWK's x) follows.
  private static final byte[] ED25519_SPKI_PREFIX = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
  private static final Pattern DECIMAL_FENCE = Pattern.compile("[1-9][0-9]{0,19}");
  private static final BigInteger MAX_FENCE = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

  private FencingProofs() {}

  /**
   * Verifies {@code proof} (compact JWS, EdDSA, Ed25519, kid) against {@code keys} and returns its
   * claims; {@code lock} and {@code issuer}, when not null, must match. A fetching source is asked
   * again once when the kid is unknown. Throws a FencingProofException naming why it is refused.
   */
  public static FencingClaims verify(String proof, KeySource keys, String lock, String issuer)
      throws FencingProofException, IOException, InterruptedException {
    JWSObject jws;
    try {
      jws = JWSObject.parse(proof);
    } catch (ParseException | RuntimeException e) {
      throw new FencingProofException(FencingProofException.Refusal.MALFORMED, "not a compact JWS: " + e.getMessage());
    }
    if (!JWSAlgorithm.EdDSA.equals(jws.getHeader().getAlgorithm()))
      throw new FencingProofException(FencingProofException.Refusal.MALFORMED, "alg " + jws.getHeader().getAlgorithm() + ", expected EdDSA");
    String kid = jws.getHeader().getKeyID();
    if (kid == null || kid.isEmpty())
      throw new FencingProofException(FencingProofException.Refusal.MALFORMED, "no kid in the header");
    PublicKey key = keyFor(kid, keys);
    try {
      Signature ed25519 = Signature.getInstance("Ed25519");
      ed25519.initVerify(key);
      ed25519.update(jws.getSigningInput());
      if (!ed25519.verify(jws.getSignature().decode()))
        throw new FencingProofException(FencingProofException.Refusal.BAD_SIGNATURE, "the signature does not verify with key \"" + kid + "\"");
    } catch (GeneralSecurityException e) {
      throw new FencingProofException(FencingProofException.Refusal.BAD_SIGNATURE, "the signature does not verify with key \"" + kid + "\": " + e.getMessage());
    }
    FencingClaims claims = claimsOf(jws.getPayload().toJSONObject(), kid);
    if (issuer != null && !issuer.equals(claims.issuer()))
      throw new FencingProofException(FencingProofException.Refusal.WRONG_ISSUER, "issued by \"" + claims.issuer() + "\", expected \"" + issuer + "\"");
    if (lock != null && !lock.equals(claims.lock()))
      throw new FencingProofException(FencingProofException.Refusal.WRONG_LOCK, "a proof for lock \"" + claims.lock() + "\", not \"" + lock + "\"");
    return claims;
  }

  private static PublicKey keyFor(String kid, KeySource keys) throws FencingProofException, IOException, InterruptedException {
    for (boolean refresh : new boolean[] {false, true}) {
      JWK jwk = keys.keys(refresh).getKeyByKeyId(kid);
      if (jwk instanceof OctetKeyPair okp && Curve.Ed25519.equals(okp.getCurve())) {
        byte[] raw = okp.getX().decode();
        byte[] spki = new byte[ED25519_SPKI_PREFIX.length + raw.length];
        System.arraycopy(ED25519_SPKI_PREFIX, 0, spki, 0, ED25519_SPKI_PREFIX.length);
        System.arraycopy(raw, 0, spki, ED25519_SPKI_PREFIX.length, raw.length);
        try {
          return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(spki));
        } catch (GeneralSecurityException e) {
          throw new FencingProofException(FencingProofException.Refusal.UNKNOWN_KID, "key \"" + kid + "\" is not a usable Ed25519 key");
        }
      }
    }
    throw new FencingProofException(FencingProofException.Refusal.UNKNOWN_KID, "no published Ed25519 key has kid \"" + kid + "\"");
  }

  private static FencingClaims claimsOf(Map<String, Object> payload, String kid) throws FencingProofException {
    if (payload == null) throw new FencingProofException(FencingProofException.Refusal.MALFORMED, "the payload is not a JSON object");
    String fence = text(payload, "fence");
    if (!DECIMAL_FENCE.matcher(fence).matches() || new BigInteger(fence).compareTo(MAX_FENCE) > 0)
      throw new FencingProofException(FencingProofException.Refusal.MALFORMED, "claim \"fence\" is not a decimal token from 1 to 2^64-1: \"" + fence + "\"");
    if (!(payload.get("iat") instanceof Number iat))
      throw new FencingProofException(FencingProofException.Refusal.MALFORMED, "claim \"iat\" is not a number");
    return new FencingClaims(
        text(payload, "lock"),
        Long.parseUnsignedLong(fence),
        text(payload, "caller"),
        text(payload, "client"),
        text(payload, "session"),
        text(payload, "owner"),
        Instant.ofEpochSecond(iat.longValue()),
        text(payload, "iss"),
        kid);
  }

  private static String text(Map<String, Object> payload, String claim) throws FencingProofException {
    if (payload.get(claim) instanceof String s) return s;
    throw new FencingProofException(FencingProofException.Refusal.MALFORMED, "claim \"" + claim + "\" is not a string");
  }
}
