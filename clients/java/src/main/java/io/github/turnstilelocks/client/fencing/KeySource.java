package io.github.turnstilelocks.client.fencing;

import com.nimbusds.jose.jwk.JWKSet;

/** The coordinators' published keys; {@code refresh} asks a fetching source to read them again. */
@FunctionalInterface
public interface KeySource {
  /** The keys; with {@code refresh}, read again (a proof named an unknown kid). */
  JWKSet keys(boolean refresh) throws java.io.IOException, InterruptedException;

  /** A fixed key set (e.g. the output of {@code turnstile keys}). */
  static KeySource of(JWKSet set) {
    return refresh -> set;
  }
}
