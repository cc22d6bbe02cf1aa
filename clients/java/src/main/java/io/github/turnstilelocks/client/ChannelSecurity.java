package io.github.turnstilelocks.client;

import io.grpc.CallCredentials;
import io.grpc.ChannelCredentials;
import io.grpc.CompositeChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.Metadata;
import io.grpc.SecurityLevel;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.concurrent.Executor;

/**
 * The connection security of a client: plaintext when nothing is set; TLS verifying the coordinator
 * against a CA (else the JDK's trust store); a client certificate for mTLS; a bearer token sent as
 * "authorization: Bearer ..." on every call, and refused without TLS (it would travel in clear).
 */
record ChannelSecurity(boolean tls, Path ca, Path cert, Path key, String token) {
  private static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  /** The grpc-java channel credentials for these settings; throws naming the setting that is wrong. */
  ChannelCredentials credentials() {
    if (!tls && ca == null && cert == null && token == null) return InsecureChannelCredentials.create();
    if ((cert == null) != (key == null)) {
      throw new IllegalArgumentException("clientCertificate: certificate and key go together");
    }
    TlsChannelCredentials.Builder builder = TlsChannelCredentials.newBuilder();
    try {
      if (ca != null) builder.trustManager(ca.toFile());
      if (cert != null) builder.keyManager(cert.toFile(), key.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException("TLS files: " + e.getMessage(), e);
    }
    ChannelCredentials transport = builder.build();
    return token == null ? transport : CompositeChannelCredentials.create(transport, bearer(token));
  }

  private static CallCredentials bearer(String token) {
    return new CallCredentials() {
      @Override
      public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
        if (info.getSecurityLevel() != SecurityLevel.PRIVACY_AND_INTEGRITY) {
          applier.fail(Status.UNAUTHENTICATED.withDescription("bearerToken: refusing to send a bearer token without TLS"));
          return;
        }
        Metadata headers = new Metadata();
        headers.put(AUTHORIZATION, "Bearer " + token);
        applier.apply(headers);
      }
    };
  }
}
