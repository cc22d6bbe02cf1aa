package io.github.turnstilelocks.client.fencing;

import java.util.Locale;

/** A refused fencing proof or guarded write; {@link #refusal()} says why. */
public final class FencingProofException extends Exception {
  private static final long serialVersionUID = 1L;

  /** Why a proof or a guarded write was refused: a closed set. */
  public enum Refusal {
    /** Not a compact JWS with EdDSA, a kid and the claims of a Turnstile proof. */
    MALFORMED,
    /** The signature does not verify with the key its kid names. */
    BAD_SIGNATURE,
    /** No published key has the proof's kid (after refreshing fetched keys). */
    UNKNOWN_KID,
    /** A valid proof, for another lock name than the resource's. */
    WRONG_LOCK,
    /** A valid proof, from another issuer than the one expected. */
    WRONG_ISSUER,
    /** A valid proof whose fence is lower than the highest the resource has seen. */
    STALE;

    /** The refusal as the other clients name it: "bad-signature", "stale", ... */
    public String label() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  private final Refusal refusal;

  /** A refusal with its reason and a message for humans. */
  public FencingProofException(Refusal refusal, String message) {
    super("fencing proof refused (" + refusal.label() + "): " + message);
    this.refusal = refusal;
  }

  /** Why it was refused. */
  public Refusal refusal() {
    return refusal;
  }
}
