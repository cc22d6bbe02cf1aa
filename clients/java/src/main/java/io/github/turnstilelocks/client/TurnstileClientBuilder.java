package io.github.turnstilelocks.client;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Settings of a {@link TurnstileClient}: the coordinators (sessions open on the first that answers
 * and resume on the next when theirs drains), the client name operators see, the session TTL, TLS
 * (CA, client certificate for mTLS), a bearer token, a session event listener and the largest request
 * a coordinator reads.
 */
public final class TurnstileClientBuilder {
  /** The coordinator's default {@code serve --max-message-bytes}. */
  static final int DEFAULT_MAX_REQUEST_BYTES = 65536;

  private final List<String> addresses = new ArrayList<>();
  private String clientName = "java";
  private Duration ttl = Duration.ofSeconds(15);
  private Duration openTimeout = Duration.ofSeconds(5);
  private int maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES;
  private boolean tls;
  private Path ca;
  private Path cert;
  private Path key;
  private String token;
  private Consumer<ClientEvent> events = event -> {};
  private boolean ownersFollowScope = true;

  TurnstileClientBuilder(List<String> addresses) {
    for (String address : addresses) addAddress(address);
  }

  /** Adds coordinator {@code host:port} addresses (or one comma-separated string of them). */
  public TurnstileClientBuilder addAddress(String address) {
    for (String one : Objects.requireNonNull(address, "address").split(",")) {
      String trimmed = one.trim();
      if (!trimmed.matches(".+:\\d{1,5}")) throw new IllegalArgumentException("address: expected host:port, got \"" + one + "\"");
      addresses.add(trimmed);
    }
    return this;
  }

  /** The name coordinators show for this client's sessions (Describe, blockers); default "java". */
  public TurnstileClientBuilder clientName(String clientName) {
    this.clientName = Objects.requireNonNull(clientName, "clientName");
    return this;
  }

  /** The session TTL asked for (the server's bounds, default 1 s – 1 h, apply); default 15 s. */
  public TurnstileClientBuilder ttl(Duration ttl) {
    if (ttl.compareTo(Duration.ofMillis(1)) < 0) throw new IllegalArgumentException("ttl: must be positive, got " + ttl);
    this.ttl = ttl;
    return this;
  }

  /**
   * How long one coordinator may take to answer an open before the next is tried; default 5 s. A
   * coordinator that accepts TCP and never answers costs a first open this much per address; then it
   * fails CONNECTION naming the address that did not answer.
   */
  public TurnstileClientBuilder openTimeout(Duration openTimeout) {
    if (openTimeout.isNegative() || openTimeout.isZero()) throw new IllegalArgumentException("openTimeout: must be positive");
    this.openTimeout = openTimeout;
    return this;
  }

  /**
   * The largest request, encoded, this client sends; default 65536, the coordinator's default
   * {@code serve --max-message-bytes} (set it to that flag's value when the coordinators run with
   * another). A request over it (a large acquire value, proclaim value or requestRelease reason) is
   * not sent: that call alone fails INVALID_ARGUMENT naming its size and the maximum, and the session
   * and its locks are untouched. (A coordinator that reads less than this fails the session's stream
   * instead, so every held lock is lost.)
   */
  public TurnstileClientBuilder maxRequestBytes(int maxRequestBytes) {
    if (maxRequestBytes < 1) throw new IllegalArgumentException("maxRequestBytes: must be positive, got " + maxRequestBytes);
    this.maxRequestBytes = maxRequestBytes;
    return this;
  }

  /** Connects over TLS, verifying coordinators with the JDK's trust store (see {@link #trustCertificates}). */
  public TurnstileClientBuilder useTls() {
    this.tls = true;
    return this;
  }

  /** Connects over TLS, verifying coordinators against the CA certificates in this PEM file. */
  public TurnstileClientBuilder trustCertificates(Path caPem) {
    this.tls = true;
    this.ca = Objects.requireNonNull(caPem, "caPem");
    return this;
  }

  /** Presents this client certificate and PKCS#8 key (PEM files) for mTLS; implies TLS. */
  public TurnstileClientBuilder clientCertificate(Path certPem, Path keyPem) {
    this.tls = true;
    this.cert = Objects.requireNonNull(certPem, "certPem");
    this.key = Objects.requireNonNull(keyPem, "keyPem");
    return this;
  }

  /** Sends {@code authorization: Bearer token} on every call; implies TLS (never sent in clear). */
  public TurnstileClientBuilder bearerToken(String token) {
    if (token == null || token.isEmpty()) throw new IllegalArgumentException("bearerToken: must not be empty");
    this.tls = true;
    this.token = token;
    return this;
  }

  /** Called (on a client callback thread) when the session connects, reconnects, resumes or expires. */
  public TurnstileClientBuilder onEvent(Consumer<ClientEvent> listener) {
    this.events = Objects.requireNonNull(listener, "listener");
    return this;
  }

  /**
   * Whether acquires without an owner take the owner of the thread's unit of work (default true): in a
   * {@code withLock}/{@code withLocks} body the held lock's, in an {@link TurnstileClient#ownerScope}
   * that scope's (docs/deadlocks.md). false: a fresh owner per acquire, whatever the thread runs in.
   */
  public TurnstileClientBuilder ownersFollowScope(boolean follow) {
    this.ownersFollowScope = follow;
    return this;
  }

  /** Builds the client; no connection is made until the first call needs a session. */
  public TurnstileClient build() {
    if (addresses.isEmpty()) throw new IllegalArgumentException("addresses: give at least one coordinator host:port");
    ChannelSecurity security = new ChannelSecurity(tls, ca, cert, key, token);
    return new TurnstileClient(List.copyOf(addresses), security.credentials(), clientName, ttl, openTimeout, maxRequestBytes, events,
        ownersFollowScope);
  }
}
