import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { type CoordinatorProcess, spawnCoordinator } from "../harness/coordinator-process.js";
import { freePort } from "../harness/free-port.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { runTurnstile, type TurnstileRun } from "../harness/run-turnstile.js";
import { waitForOutput } from "../harness/wait-for-output.js";

/** Holds a loopback port, as another program would. */
async function takePort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return { port: typeof address === "object" && address ? address.port : 0, server };
}

/**
 * Every line of stdout and stderr as parsed JSON; fails the test on any line that is not JSON, except
 * (with `said`) that one line on stderr, the plain words for a person at a terminal.
 */
function jsonLines(run: TurnstileRun, said?: string): Record<string, unknown>[] {
  if (said !== undefined)
    expect(run.stderr.split("\n").filter((l) => l.startsWith("turnstile serve: "))).to.deep.equal([said]);
  const lines = `${run.stdout}${run.stderr}`.split("\n").filter((l) => l !== "" && l !== said);
  return lines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new Error(`not a JSON log line: ${line}`);
    }
  });
}

describe("turnstile serve start-up failures and store logs (real processes)", () => {
  let redis: TestRedis;
  before(async () => {
    redis = await startRedis();
  });
  after(() => redis.stop());

  it("exits 3 with one JSON fatal line, and nothing from grpc-js, when the gRPC port is in use", async () => {
    const taken = await takePort();
    try {
      const run = await runTurnstile(["serve", "--listen", `127.0.0.1:${taken.port}`, "--redis", redis.url]);
      expect(run.code).to.equal(3);
      const lines = jsonLines(
        run,
        `turnstile serve: cannot listen on 127.0.0.1:${taken.port} (gRPC): address already in use: another process listens there (a coordinator still running or draining?): stop it, or give --listen another port`,
      );
      const fatal = lines.filter((l) => l.level === 60);
      expect(fatal.map((l) => [l.msg, l.exitCode])).to.deep.equal([
        [`cannot start: cannot listen on 127.0.0.1:${taken.port} (gRPC): address already in use`, 3],
      ]);
      expect(lines.some((l) => l.msg === "listening")).to.equal(false);
    } finally {
      taken.server.close();
    }
  });

  it("exits 3 with one JSON fatal line, before ever logging 'listening', when the metrics port is in use", async () => {
    const taken = await takePort();
    try {
      const args = ["serve", "--listen", "127.0.0.1:0", "--redis", redis.url, "--metrics", `127.0.0.1:${taken.port}`];
      const run = await runTurnstile(args);
      expect(run.code).to.equal(3);
      const lines = jsonLines(
        run,
        `turnstile serve: cannot listen on 127.0.0.1:${taken.port} (metrics): address already in use: another process listens there (a coordinator still running or draining?): stop it, or give --metrics another port`,
      );
      expect(lines.filter((l) => l.level === 60).map((l) => [l.msg, l.exitCode])).to.deep.equal([
        [`cannot start: cannot listen on 127.0.0.1:${taken.port} (metrics): address already in use`, 3],
      ]);
      expect(lines.some((l) => l.msg === "listening")).to.equal(false);
    } finally {
      taken.server.close();
    }
  });

  it("exits 3 with one JSON fatal line, before ever logging 'listening', when the web console port is in use", async () => {
    const taken = await takePort();
    try {
      const run = await runTurnstile([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--redis",
        redis.url,
        "--http",
        `127.0.0.1:${taken.port}`,
      ]);
      expect(run.code).to.equal(3);
      const lines = jsonLines(
        run,
        `turnstile serve: cannot listen on 127.0.0.1:${taken.port} (web console): address already in use: another process listens there (a coordinator still running or draining?): stop it, or give --http another port`,
      );
      expect(lines.filter((l) => l.level === 60).map((l) => [l.msg, l.exitCode])).to.deep.equal([
        [`cannot start: cannot listen on 127.0.0.1:${taken.port} (web console): address already in use`, 3],
      ]);
      expect(lines.some((l) => l.msg === "listening")).to.equal(false);
    } finally {
      taken.server.close();
    }
  });

  it("exits 1 with one JSON fatal line naming Redis when Redis is unreachable at start-up", async () => {
    const run = await runTurnstile([
      "serve",
      "--listen",
      "127.0.0.1:0",
      "--redis",
      `redis://127.0.0.1:${await freePort()}`,
    ]);
    expect(run.code).to.equal(1);
    const fatal = jsonLines(run).filter((l) => l.level === 60);
    expect(fatal).to.have.length(1);
    expect(fatal[0].msg).to.match(/^cannot start: redis: cannot connect: .*ECONNREFUSED/);
    expect(fatal[0].exitCode).to.equal(1);
  });

  it("exits 2 on invalid settings: one line per error on stderr and one JSON fatal line in the log", async () => {
    const run = await runTurnstile(["serve", "--listen", "nowhere"]);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.match(/^turnstile serve: listen: "nowhere" from flag --listen is not HOST:PORT/);
    const fatal = JSON.parse(run.stdout.trim());
    expect(fatal).to.include({ level: 60, msg: "cannot start: invalid settings", exitCode: 2 });
    expect(fatal.errors).to.have.length(1);
  });

  it("exits 2 with one line on stderr and one JSON fatal line when the TLS certificate is not usable", async () => {
    const dir = mkdtempSync(join(tmpdir(), "turnstile-bad-cert-"));
    try {
      const pem = join(dir, "not-a-cert.pem");
      writeFileSync(pem, "not a certificate\n");
      const run = await runTurnstile(["serve", "--listen", "127.0.0.1:0", "--tls-cert", pem, "--tls-key", pem]);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.match(/^turnstile serve: tls-cert\/tls-key: not a usable certificate and key: [^\n]*\n$/);
      const fatal = jsonLines({ ...run, stderr: "" }).filter((l) => l.level === 60);
      expect(fatal.map((l) => [l.msg, l.exitCode])).to.deep.equal([["cannot start: invalid settings", 2]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe("while running", () => {
    let flaky: TestRedis;
    let coordinator: CoordinatorProcess;
    after(async () => {
      await coordinator?.kill();
      await flaky?.stop();
    });

    it("logs Redis lost (warn) and back (info) as JSON lines", async function () {
      this.timeout(40_000);
      flaky = await startRedis();
      coordinator = await spawnCoordinator(flaky.url);
      const lost = waitForOutput(coordinator.process, /\{[^\n]*"msg":"store \(Redis\) unreachable[^\n]*\}\n/, 15_000);
      await flaky.stop();
      const lostLine = JSON.parse((await lost)[0]);
      expect(lostLine).to.include({ level: 40, storeHealthy: false });
      const back = waitForOutput(
        coordinator.process,
        /\{[^\n]*"msg":"store \(Redis\) reachable again"[^\n]*\}\n/,
        20_000,
      );
      flaky = await startRedis({ port: flaky.port });
      const backLine = JSON.parse((await back)[0]);
      expect(backLine).to.include({ level: 30, storeHealthy: true });
    });
  });
});
