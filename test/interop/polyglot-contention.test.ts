import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { type TlsOptions, TurnstileClient } from "../../client/index.js";
import { hashToken } from "../../server/security/token-file.js";
import { checkSharedLog } from "../harness/check-shared-log.js";
import { type CoordinatorProcess, spawnCoordinator } from "../harness/coordinator-process.js";
import { redisServerAvailable, startRedis, type TestRedis } from "../harness/redis-server.js";
import { type CertFiles, pemOf, TestPki } from "../harness/test-pki.js";
import { waitForQueue } from "../harness/wait-for-queue.js";
import { type ExampleProcess, rejectOnExit, spawnExample } from "./example-process.js";
import { runTsWorker } from "./ts-worker.js";
import { waitForHolds } from "./wait-for-holds.js";

// Run by `npm run test:interop` (which builds both examples first), never by plain `npm test`.
const GO_BIN = fileURLToPath(new URL("../../examples/go/bin/turnstile-example", import.meta.url));
const JAVA_JAR = fileURLToPath(new URL("../../examples/java/target/turnstile-example.jar", import.meta.url));

const LOCK = "interop/polyglot";
const WORKERS_PER_LANGUAGE = 3;
const ROUNDS = 20;
const HOLD_MS = 10;
const WAIT_MS = 60_000;
// Java names itself with a token on top of its certificate, whose own identity has no grant: so
// Java can only take the lock if its bearer token goes out and is checked.
const JAVA_TOKEN = "interop-java-token-5c1e0b7d2f";
const POLICY = {
  rules: [{ identities: ["interop-ts", "interop-go", "interop-java"], rights: ["lock"], prefixes: ["interop/"] }],
};

describe("polyglot contention: TypeScript, Go and Java clients on one lock, over mTLS, across a coordinator drain", () => {
  let redis: TestRedis | undefined;
  // Every client lists `drained` first, so every session starts there and must resume on `survivor`.
  let drained: CoordinatorProcess | undefined;
  let survivor: CoordinatorProcess | undefined;
  let logDir: string;
  let pki: TestPki;
  const certs: Record<string, CertFiles> = {};
  let tsTls: TlsOptions;

  before(async function () {
    this.timeout(30_000);
    if (!redisServerAvailable())
      throw new Error("redis-server not found on PATH (Debian: apt-get install redis-server)");
    for (const built of [GO_BIN, JAVA_JAR]) {
      if (!existsSync(built)) throw new Error(`${built} is missing: run npm run build:examples`);
    }
    redis = await startRedis();
    logDir = mkdtempSync(join(tmpdir(), "turnstile-interop-"));
    // The jar runs from a directory of its own: it must be self-contained (no lib/ beside it).
    copyFileSync(JAVA_JAR, join(logDir, "turnstile-example.jar"));
    pki = new TestPki(logDir);
    const server = pki.server();
    certs.ts = pki.leaf("ts", { cn: "interop-ts" });
    certs.go = pki.leaf("go", { cn: "go-cert", san: ["URI:interop-go"] });
    certs.java = pki.leaf("java", { cn: "interop-java-cert" });
    tsTls = { ca: pki.caPem, ...pemOf(certs.ts) };
    writeFileSync(join(logDir, "policy.json"), JSON.stringify(POLICY));
    writeFileSync(join(logDir, "tokens"), `interop-java ${hashToken(JAVA_TOKEN)}\n`);
    const secured = [
      ...["--tls-cert", server.cert, "--tls-key", server.key, "--tls-client-ca", pki.ca],
      ...["--policy", join(logDir, "policy.json"), "--token-file", join(logDir, "tokens")],
    ];
    [drained, survivor] = await Promise.all([
      spawnCoordinator(redis.url, secured),
      spawnCoordinator(redis.url, secured),
    ]);
  });
  after(async () => {
    await Promise.all([drained?.kill(), survivor?.kill()]);
    await redis?.stop();
    if (logDir) rmSync(logDir, { recursive: true, force: true });
  });

  it(`keeps holds apart with strictly increasing tokens while ${WORKERS_PER_LANGUAGE} workers per language contend for ${ROUNDS} rounds, every language resumes when its coordinator drains (SIGTERM) mid-run and keeps getting the lock`, async function () {
    this.timeout(180_000);
    const addresses = [drained!.address, survivor!.address];
    const logPath = join(logDir, "shared.log");
    const logFd = openSync(logPath, "a");
    const flags = (name: string) => [
      `--addr=${addresses.join(",")}`,
      `--tls-ca=${pki.ca}`,
      `--tls-cert=${certs[name].cert}`,
      `--tls-key=${certs[name].key}`,
      ...(name === "java" ? [`--token=${JAVA_TOKEN}`] : []),
      `--lock=${LOCK}`,
      `--rounds=${ROUNDS}`,
      `--workers=${WORKERS_PER_LANGUAGE}`,
      `--name=${name}`,
      `--log=${logPath}`,
      `--hold=${HOLD_MS}ms`,
      `--wait=${WAIT_MS / 1000}s`,
    ];
    // A gate holds the lock until every worker waits in the queue, so all three languages
    // contend from the first round on instead of whoever starts fastest running alone.
    const gate = new TurnstileClient(addresses, { clientName: "gate", tls: tsTls });
    const gateLock = await gate.acquire(LOCK);
    const examples: ExampleProcess[] = [
      spawnExample("go example", GO_BIN, flags("go")),
      spawnExample("java example", "java", ["-jar", join(logDir, "turnstile-example.jar"), ...flags("java")]),
    ];
    try {
      const tsWorkers = Array.from({ length: WORKERS_PER_LANGUAGE }, (_, i) =>
        runTsWorker({
          address: addresses,
          name: `ts-${i + 1}`,
          lock: LOCK,
          rounds: ROUNDS,
          holdMs: HOLD_MS,
          waitMs: WAIT_MS,
          logFd,
          tls: tsTls,
        }),
      );
      const earlyExit = rejectOnExit(examples);
      try {
        await Promise.race([waitForQueue(redis!.url, LOCK, 3 * WORKERS_PER_LANGUAGE, 60_000), earlyExit.promise]);
      } finally {
        earlyExit.dispose();
        await gateLock.release();
        await gate.close();
      }
      // The fault: a third of the way in, drain the coordinator every session is on.
      const total = 3 * WORKERS_PER_LANGUAGE * ROUNDS;
      const exitedEarly = rejectOnExit(examples);
      try {
        await Promise.race([waitForHolds(logPath, Math.floor(total / 3), 120_000), exitedEarly.promise]);
      } finally {
        exitedEarly.dispose();
      }
      const drainedExit = new Promise<number | null>((resolve) => drained!.process.once("exit", resolve));
      drained!.process.kill("SIGTERM");
      expect(await drainedExit, "drained coordinator's exit code").to.equal(0);
      const faults = 1;
      const [results, ts] = await Promise.all([Promise.all(examples.map((e) => e.exited)), Promise.all(tsWorkers)]);
      results.forEach(({ code, output }, i) => {
        expect(code, `${examples[i].label} exit code; output:\n${output}`).to.equal(0);
      });
      // Every language went on as the same session on the survivor, with its locks.
      const resumes = {
        ts: ts.reduce((n, w) => n + w.resumes, 0),
        go: results[0].output.match(/: resumed with \d+ lock/g)?.length ?? 0,
        java: results[1].output.match(/: resumed with \d+ lock/g)?.length ?? 0,
      };
      console.log(`      ${faults} coordinator drained mid-run; sessions resumed: ${JSON.stringify(resumes)}`);
      expect(resumes).to.deep.equal({ ts: WORKERS_PER_LANGUAGE, go: WORKERS_PER_LANGUAGE, java: WORKERS_PER_LANGUAGE });
    } finally {
      closeSync(logFd);
      await Promise.all(examples.map((e) => e.kill()));
    }

    const report = checkSharedLog(readFileSync(logPath, "utf8"));
    const counts = [...report.holdsByLanguage].map(([language, holds]) => `${language} ${holds}`).join(", ");
    console.log(`      ${report.holds} holds (${counts}), ${report.languageSwitches} hand-offs between languages`);
    const perLanguage = WORKERS_PER_LANGUAGE * ROUNDS;
    expect(Object.fromEntries(report.holdsByLanguage)).to.deep.equal({
      ts: perLanguage,
      go: perLanguage,
      java: perLanguage,
    });
    // FIFO hand-off with everyone queued interleaves the languages; a run per language would switch twice.
    expect(report.languageSwitches).to.be.at.least(ROUNDS);
  });
});
