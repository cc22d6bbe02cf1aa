package io.github.turnstilelocks.client;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import turnstile.v1.Turnstile.ReleaseRequested;

/**
 * Someone asks the holder of a lock to let go (docs/elections.md): a session's request ({@code requester}
 * "session &lt;id&gt;", {@code sessionId} that id) or an operator's ({@code turnstile ask-release},
 * "operator …", {@code sessionId} empty). Nothing is enforced: the holder decides.
 */
public record ReleaseRequest(String name, String owner, String requester, String reason, String sessionId) {
  private static final Pattern SESSION = Pattern.compile("^session ([0-9a-f]+)$");

  static ReleaseRequest of(ReleaseRequested r) {
    Matcher m = SESSION.matcher(r.getRequester());
    return new ReleaseRequest(r.getName(), r.getOwner(), r.getRequester(), r.getReason(), m.matches() ? m.group(1) : "");
  }
}
