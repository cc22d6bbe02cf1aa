package io.github.turnstilelocks.client;

/** Who holds a lock after {@link Lock#transfer}: the successor's session, owner and (higher) fencing token. */
public record Successor(String sessionId, String owner, long fencingToken) {}
