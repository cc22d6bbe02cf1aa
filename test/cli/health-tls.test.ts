import { expect } from "chai";
import { runTurnstile } from "../harness/run-turnstile.js";
import { type SecureCoordinator, startSecureCoordinator } from "../harness/secure-coordinator.js";

// `turnstile health` against coordinators serving TLS and mTLS with real openssl certificates (the
// embedded store: no redis-server needed). A TLS deployment's health check must pass, not dial plaintext.
describe("turnstile health over TLS and mTLS", () => {
  let tls: SecureCoordinator;
  let mtls: SecureCoordinator;

  before(async () => {
    tls = await startSecureCoordinator({ mtls: false, tokens: { prober: "probe-token-1" } });
    mtls = await startSecureCoordinator({ mtls: true });
  });
  after(async () => {
    await tls?.stop();
    await mtls?.stop();
  });

  it("answers SERVING over TLS with --tls-ca, and with a bearer token", async () => {
    const run = await runTurnstile(["health", "--server", tls.address, "--tls-ca", tls.pki.ca]);
    expect([run.code, run.stdout, run.stderr]).to.deep.equal([0, "SERVING\n", ""]);
    const token = await runTurnstile(["health", "--server", tls.address, "--tls-ca", tls.pki.ca], {
      env: { TURNSTILE_TOKEN: "probe-token-1" },
    });
    expect([token.code, token.stdout, token.stderr]).to.deep.equal([0, "SERVING\n", ""]);
  });

  it("answers SERVING over mTLS with a client certificate from the CLI's env vars (TURNSTILE_CLIENT_TLS_*)", async () => {
    const client = mtls.pki.leaf("prober", { cn: "prober" });
    const run = await runTurnstile(["health", "--server", mtls.address], {
      env: {
        TURNSTILE_CLIENT_TLS_CA: mtls.pki.ca,
        TURNSTILE_CLIENT_TLS_CERT: client.cert,
        TURNSTILE_CLIENT_TLS_KEY: client.key,
      },
    });
    expect([run.code, run.stdout, run.stderr]).to.deep.equal([0, "SERVING\n", ""]);
  });

  it("ignores serve's TURNSTILE_TLS_CERT/KEY: the CLI's names do not collide with the coordinator's", async () => {
    const client = mtls.pki.leaf("stray", { cn: "stray" });
    const run = await runTurnstile(["health", "--server", mtls.address, "--tls-ca", mtls.pki.ca, "--timeout", "3s"], {
      env: { TURNSTILE_TLS_CERT: client.cert, TURNSTILE_TLS_KEY: client.key },
    });
    // Without a client certificate the mTLS handshake fails: serve's variables were not picked up.
    expect(run.code).to.equal(69);
    expect(run.stderr).to.match(/^turnstile health: 127\.0\.0\.1:\d+: (UNAVAILABLE|DEADLINE_EXCEEDED)/);
  });

  it("fails with exit 69 when it dials plaintext to a TLS coordinator", async () => {
    const run = await runTurnstile(["health", "--server", tls.address, "--timeout", "3s"]);
    expect(run.code).to.equal(69);
    expect(run.stdout).to.equal("");
  });
});
