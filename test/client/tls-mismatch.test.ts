import { spawn } from "node:child_process";
import { expect } from "chai";
import { TurnstileClient, TurnstileError } from "../../client/index.js";
import { type EmbeddedCoordinator, startEmbeddedCoordinator } from "../harness/embedded-coordinator.js";
import { type SecureCoordinator, startSecureCoordinator } from "../harness/secure-coordinator.js";

/** The error `connect()` rejects with. */
async function connectError(client: TurnstileClient): Promise<TurnstileError> {
  try {
    await client.connect();
  } catch (error) {
    expect(error).to.be.instanceOf(TurnstileError);
    return error as TurnstileError;
  } finally {
    await client.close();
  }
  return expect.fail("connect() resolved");
}

// TLS and plaintext mixed up get a message naming the likely mismatch, not only OpenSSL's "wrong
// version number" or grpc-js's "Failed to connect"; TLS to an IP address prints no DEP0123.
describe("TLS and plaintext mixed up, and TLS to an IP address", function () {
  this.timeout(20_000);
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

  it("a TLS client on a plaintext port: 'connection' saying the coordinator answered in plaintext", async () => {
    const error = await connectError(new TurnstileClient(plain.address, { tls: { ca: tls.pki.caPem } }));
    expect(error.reason).to.equal("connection");
    expect(error.message).to.match(
      /wrong version number.* — this client uses TLS but the coordinator answered in plaintext/,
    );
  });

  it("a plaintext client on a TLS port: 'connection' saying the coordinator may serve TLS and what to give", async () => {
    const error = await connectError(new TurnstileClient(tls.address));
    expect(error.reason).to.equal("connection");
    expect(error.message).to.include(
      "this client uses plaintext: if the coordinator serves TLS (required off loopback), give the client its CA (tls: { ca }, CLI --tls-ca)",
    );
  });

  it("a TLS client to 127.0.0.1 acquires and prints no DEP0123 (a fresh process: Node warns once per process)", async () => {
    const script = `
      import { TurnstileClient } from "./client/index.ts";
      const client = new TurnstileClient(process.env.ADDRESS, { tls: { ca: process.env.CA } });
      const lock = await client.acquire("tls/ip", { waitMs: 5000 });
      await lock.release();
      await client.close();
      console.log("acquired over TLS at", process.env.ADDRESS);
    `;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      env: { ...process.env, ADDRESS: tls.address, CA: tls.pki.caPem },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d;
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect([code, stdout, stderr]).to.deep.equal([0, `acquired over TLS at ${tls.address}\n`, ""]);
  });
});
