import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { TurnstileClient } from "../../client/index.js";
import { freePort } from "../harness/free-port.js";
import { spawnServe } from "../harness/redis-coordinator.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { runTurnstile, type TurnstileProcess } from "../harness/run-turnstile.js";
import { makeTlsFiles, type TlsFiles } from "../harness/tls-certs.js";

describe("a coordinator on Redis over TLS with a password (rediss://)", () => {
  let dir: string;
  let tls: TlsFiles;
  let redis: TestRedis;
  let tlsPort: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "turnstile-tls-"));
    tls = makeTlsFiles(dir);
    tlsPort = await freePort();
    redis = await startRedis({
      args: ["--port", "0", "--tls-port", String(tlsPort), "--requirepass", "s3cret"]
        .concat(["--tls-cert-file", tls.cert, "--tls-key-file", tls.key, "--tls-ca-cert-file", tls.ca])
        .concat(["--tls-auth-clients", "no"]),
    });
  });
  after(async () => {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves locks with the CA given by --redis-tls-ca and the password in the URL", async () => {
    let serve: TurnstileProcess | undefined;
    try {
      const started = await spawnServe(["--redis", `rediss://:s3cret@127.0.0.1:${tlsPort}`, "--redis-tls-ca", tls.ca]);
      serve = started.serve;
      const c = new TurnstileClient(started.address);
      const lock = await c.acquire("tls/lock");
      expect(lock.fencingToken).to.equal(1n);
      await c.close();
    } finally {
      serve?.child.kill("SIGKILL");
    }
  });

  it("does not start (exit 1, the reason in one JSON log line) with a wrong password", async () => {
    const run = await runTurnstile(
      ["serve", "--listen", "127.0.0.1:0", "--redis", `rediss://127.0.0.1:${tlsPort}`, "--redis-tls-ca", tls.ca],
      { env: { TURNSTILE_REDIS_PASSWORD: "wrong" } },
    );
    expect(run.code).to.equal(1);
    expect(run.stdout).to.match(/"msg":"cannot start: redis: cannot connect: WRONGPASS invalid username-password pair/);
  });
});
