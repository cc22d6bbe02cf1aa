import { expect } from "chai";
import { type EmbeddedCoordinator, startEmbeddedCoordinator } from "../harness/embedded-coordinator.js";
import { runTurnstile } from "../harness/run-turnstile.js";
import { type SecureCoordinator, startSecureCoordinator } from "../harness/secure-coordinator.js";

const TLS_ON_PLAINTEXT = "this client uses TLS but the coordinator answered in plaintext";
const PLAINTEXT_ON_TLS = "this client uses plaintext: if the coordinator serves TLS";

// The CLI's one line on stderr names the likely mismatch when TLS and plaintext are mixed up.
describe("turnstile commands with TLS and plaintext mixed up", function () {
  this.timeout(30_000);
  let tls: SecureCoordinator;
  let plain: EmbeddedCoordinator;

  before(async () => {
    tls = await startSecureCoordinator({ mtls: false });
    plain = await startEmbeddedCoordinator();
  });
  after(async () => {
    await tls?.stop();
    await plain?.coordinator.stop();
  });

  it("lock, describe and health with --tls-ca on a plaintext port: exit 69 saying it answered in plaintext", async () => {
    const flags = ["--server", plain.address, "--tls-ca", tls.pki.ca];
    const [lock, describe, health] = await Promise.all([
      runTurnstile(["lock", ...flags, "cli/tls", "--", "true"]),
      runTurnstile(["describe", ...flags, "cli/tls"]),
      runTurnstile(["health", ...flags]),
    ]);
    for (const run of [lock, describe, health]) {
      expect(run.code, run.stderr).to.equal(69);
      expect(run.stderr).to.include(TLS_ON_PLAINTEXT);
    }
  });

  it("lock, describe and health in plaintext on a TLS port: exit 69 saying the coordinator may serve TLS", async () => {
    const flags = ["--server", tls.address];
    const [lock, describe, health] = await Promise.all([
      runTurnstile(["lock", ...flags, "cli/tls", "--", "true"]),
      runTurnstile(["describe", ...flags, "cli/tls"]),
      runTurnstile(["health", ...flags, "--timeout", "3s"]),
    ]);
    for (const run of [lock, describe, health]) {
      expect(run.code, run.stderr).to.equal(69);
      expect(run.stderr).to.include(PLAINTEXT_ON_TLS);
    }
  });
});
