package turnstile.example;

import io.grpc.CallCredentials;
import io.grpc.ChannelCredentials;
import io.grpc.CompositeChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import java.io.File;
import java.io.IOException;
import java.util.concurrent.Executor;

/**
 * The connection security settings, named as the turnstile CLI names them (--tls-ca, --tls-cert,
 * --tls-key, --token; env TURNSTILE_CLIENT_TLS_CA, ...): plaintext when none is set; TLS verifying the
 * coordinator against the CA (else the JDK's trust store); a client certificate for mTLS; a bearer
 * token sent as "authorization: Bearer ..." on every call, refused without TLS.
 */
record ChannelSecurity(String ca, String cert, String key, String token) {
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  /** The grpc-java channel credentials for these settings; throws naming the setting that is wrong. */
  ChannelCredentials credentials() throws IOException {
    if (ca.isEmpty() && cert.isEmpty() && key.isEmpty() && token.isEmpty()) {
      return InsecureChannelCredentials.create();
    }
    if (cert.isEmpty() != key.isEmpty()) {
      throw new IllegalArgumentException("tls-cert and tls-key go together: set both or neither");
    }
    TlsChannelCredentials.Builder tls = TlsChannelCredentials.newBuilder();
    if (!ca.isEmpty()) tls.trustManager(new File(ca));
    if (!cert.isEmpty()) tls.keyManager(new File(cert), new File(key));
    ChannelCredentials transport = tls.build();
    return token.isEmpty() ? transport : CompositeChannelCredentials.create(transport, bearer(token));
  }

  private static CallCredentials bearer(String token) {
    return new CallCredentials() {
      @Override
      public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
        if (info.getSecurityLevel() != io.grpc.SecurityLevel.PRIVACY_AND_INTEGRITY) {
          applier.fail(Status.UNAUTHENTICATED.withDescription("token: refusing to send a bearer token without TLS"));
          return;
        }
        Metadata headers = new Metadata();
        headers.put(AUTHORIZATION, "Bearer " + token);
        applier.apply(headers);
      }
    };
  }
}
