package io.github.turnstilelocks.client.fencing;

import com.nimbusds.jose.jwk.JWKSet;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.text.ParseException;
import java.time.Duration;

/**
 * The keys from a coordinator's JWKS endpoint ({@code GET /.well-known/jwks.json} on {@code serve
 * --http}): fetched on first use, cached for {@code maxAge}, and fetched again when a proof names an
 * unknown kid (at most once per {@code refreshCooldown}). A failed fetch keeps serving the last keys
 * it had. Thread-safe.
 */
public final class JwksFetcher implements KeySource {
  private final URI uri;
  private final Duration maxAge;
  private final Duration refreshCooldown;
  private final HttpClient http;
  private JWKSet cached;
  private long fetchedAtNanos;
  private int fetches;

  /** Fetches from {@code url}: a JWKS URL, or the coordinator's {@code --http} HOST:PORT. Defaults: 5 min, 30 s. */
  public JwksFetcher(String url) {
    this(url, Duration.ofMinutes(5), Duration.ofSeconds(30));
  }

  /** Fetches from {@code url} with the given cache age and refresh cooldown. */
  public JwksFetcher(String url, Duration maxAge, Duration refreshCooldown) {
    this.uri = URI.create(url.matches("^https?://.*") ? url : "http://" + url + "/.well-known/jwks.json");
    this.maxAge = maxAge;
    this.refreshCooldown = refreshCooldown;
    this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  }

  /** How many times the key set was fetched. */
  public synchronized int fetches() {
    return fetches;
  }

  @Override
  public synchronized JWKSet keys(boolean refresh) throws IOException, InterruptedException {
    long age = System.nanoTime() - fetchedAtNanos;
    if (cached != null && age < maxAge.toNanos() && (!refresh || age < refreshCooldown.toNanos())) return cached;
    fetchedAtNanos = System.nanoTime();
    fetches++;
    try {
      HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).GET().build();
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) throw new IOException("HTTP " + response.statusCode());
      cached = JWKSet.parse(response.body());
    } catch (IOException | ParseException e) {
      if (cached == null) throw new IOException("cannot fetch the fencing keys from " + uri + ": " + e.getMessage(), e);
    }
    return cached;
  }
}
