import { Server, ServerCredentials } from "@grpc/grpc-js";
import { expect } from "chai";
import { HealthImplementation } from "grpc-health-check";
import type { Coordinator } from "../../server/coordinator.js";
import { startEmbeddedCoordinator } from "../harness/embedded-coordinator.js";
import { freePort } from "../harness/free-port.js";
import { runTurnstile } from "../harness/run-turnstile.js";

// Runs without redis-server: a coordinator on the embedded store, and a bare health server.
describe("turnstile health", () => {
  let coordinator: Coordinator;
  let address: string;

  before(async () => {
    ({ coordinator, address } = await startEmbeddedCoordinator());
  });
  after(() => coordinator.stop());

  it("prints SERVING and exits 0 for a serving coordinator, as a whole and for its LockService", async () => {
    const whole = await runTurnstile(["health", "--server", address]);
    expect([whole.code, whole.stdout, whole.stderr]).to.deep.equal([0, "SERVING\n", ""]);
    const service = await runTurnstile(["health", "--server", address, "--service", "turnstile.v1.LockService"]);
    expect([service.code, service.stdout]).to.deep.equal([0, "SERVING\n"]);
  });

  it("prints NOT_SERVING and exits 1 when the health service says so", async () => {
    const server = new Server();
    const health = new HealthImplementation({ "": "NOT_SERVING" });
    health.addToServer(server);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    try {
      const run = await runTurnstile(["health", "--server", `127.0.0.1:${port}`]);
      expect([run.code, run.stdout]).to.deep.equal([1, "NOT_SERVING\n"]);
    } finally {
      server.forceShutdown();
    }
  });

  it("exits 69 naming the status when the service is unknown or nobody listens", async () => {
    const unknown = await runTurnstile(["health", "--server", address, "--service", "no.such.Service"]);
    expect(unknown.code).to.equal(69);
    expect(unknown.stderr).to.match(/^turnstile health: 127\.0\.0\.1:\d+: NOT_FOUND/);
    const nobody = await runTurnstile(["health", "--server", `127.0.0.1:${await freePort()}`, "--timeout", "3s"]);
    expect(nobody.code).to.equal(69);
    expect(nobody.stderr).to.match(/^turnstile health: 127\.0\.0\.1:\d+: (UNAVAILABLE|DEADLINE_EXCEEDED)/);
    expect(nobody.stderr).not.to.include("Resolution note");
  });

  it("exits 2 with one line naming --timeout when it is not a positive duration", async () => {
    const run = await runTurnstile(["health", "--timeout", "soon"]);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.equal(
      'turnstile health: --timeout must be a duration above 0, at most 2147483647ms (about 24.8d), such as 3s, got "soon" (see turnstile health --help)\n',
    );
  });
});
