package io.github.turnstilelocks.client.fencing;

import java.io.IOException;
import java.util.List;
import redis.clients.jedis.commands.ScriptingKeyCommands;

/**
 * Guards Redis keys with fencing proofs (needs Jedis on the class path): {@link #write} verifies the
 * proof in this process (Lua cannot verify Ed25519), then one script compares its fence with the
 * highest stored for the key (at {@code <key>:fence}), refuses a lower one and does the SET,
 * atomically. The script is the same in the TypeScript and Go guards. On Redis Cluster give the key
 * a hash tag ({@code {orders}:total}) so both keys live in one slot.
 */
public final class RedisFenceGuard {
  /**
   * KEYS[1] the resource key, KEYS[2] its fence key; ARGV[1] the fence (decimal, compared as text:
   * Lua's numbers lose precision above 2^53), ARGV[2] the value to SET. Returns {1, fence} when
   * written, {0, highest} when refused.
   */
  public static final String FENCE_WRITE_SCRIPT = """

      local fence = ARGV[1]
      local highest = redis.call('GET', KEYS[2])
      if highest and (#highest > #fence or (#highest == #fence and highest > fence)) then
        return {0, highest}
      end
      redis.call('SET', KEYS[2], fence)
      redis.call('SET', KEYS[1], ARGV[2])
      return {1, fence}
      """;

  private final ScriptingKeyCommands redis;
  private final KeySource keys;
  private final String issuer;

  /** A guard over {@code redis} (a Jedis, JedisPooled or UnifiedJedis) checking proofs against {@code keys}. */
  public RedisFenceGuard(ScriptingKeyCommands redis, KeySource keys) {
    this(redis, keys, null);
  }

  /** As above, also requiring proofs of {@code issuer} (null: any). */
  public RedisFenceGuard(ScriptingKeyCommands redis, KeySource keys, String issuer) {
    this.redis = redis;
    this.keys = keys;
    this.issuer = issuer;
  }

  /** Where the highest fence seen for {@code key} is kept. */
  public static String fenceKey(String key) {
    return key + ":fence";
  }

  /**
   * Sets {@code key} to {@code value} under {@code proof}, which must be a valid proof for {@code
   * lock} whose fence is not lower than the highest {@code key} has seen; returns its claims. A
   * refusal (STALE, BAD_SIGNATURE, WRONG_LOCK, ...) leaves the key and its fence untouched.
   */
  public FencingClaims write(String proof, String key, String value, String lock)
      throws FencingProofException, IOException, InterruptedException {
    FencingClaims claims = FencingProofs.verify(proof, keys, lock, issuer);
    String fence = Long.toUnsignedString(claims.fence());
    List<?> reply = (List<?>) redis.eval(FENCE_WRITE_SCRIPT, List.of(key, fenceKey(key)), List.of(fence, value));
    if (((Number) reply.get(0)).longValue() != 1) {
      Object highest = reply.get(1) instanceof byte[] b ? new String(b, java.nio.charset.StandardCharsets.UTF_8) : reply.get(1);
      throw new FencingProofException(
          FencingProofException.Refusal.STALE,
          "fence " + fence + " of lock \"" + claims.lock() + "\" is lower than " + highest + ", the highest \"" + key + "\" has seen");
    }
    return claims;
  }
}
