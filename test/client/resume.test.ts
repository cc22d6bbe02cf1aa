import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { Redis } from "ioredis";
import { type Lock, TurnstileClient, type TurnstileSessionEvent } from "../../client/index.js";
import { type CoordinatorProcess, spawnCoordinator } from "../harness/coordinator-process.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { TcpProxy } from "../harness/tcp-proxy.js";
import { waitForOutput } from "../harness/wait-for-output.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

const CHILD = fileURLToPath(new URL("../harness/resume-child.ts", import.meta.url));

/** Resolves with the client's next `type` event; rejects after `timeoutMs`. */
async function nextEvent(
  client: TurnstileClient,
  type: "resumed" | "reconnecting" | "expired",
  timeoutMs: number,
): Promise<TurnstileSessionEvent> {
  const [event] = await once(client, type, { signal: AbortSignal.timeout(timeoutMs) });
  return event;
}

describe("session resume across coordinators (real processes)", () => {
  let redis: TestRedis;
  let one: CoordinatorProcess;
  let two: CoordinatorProcess;
  const clients: TurnstileClient[] = [];
  const client = (addresses: string | string[], ttlMs = 15_000) => {
    const c = new TurnstileClient(addresses, { ttlMs });
    clients.push(c);
    return c;
  };

  before(async () => {
    redis = await startRedis();
  });
  beforeEach(async () => {
    [one, two] = await Promise.all([spawnCoordinator(redis.url), spawnCoordinator(redis.url)]);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
    await Promise.all([one.kill(), two.kill()]);
  });
  after(async () => {
    await redis.stop();
  });

  it("resumes on the second coordinator when the first is SIGKILLed: same tokens, nobody else gets the locks, and a pending acquire completes there", async () => {
    const resilient = client([one.address, two.address]);
    const other = client(two.address);
    const names = ["kill/a", "kill/b", "kill/c"];
    const held = await Promise.all(names.map((name) => resilient.acquire(name)));
    const blocker = await other.acquire("kill/d");
    const pending = resilient.acquire("kill/d");
    await waitForQueue(redis.url, "kill/d", 1);

    const resumed = nextEvent(resilient, "resumed", 10_000);
    await one.kill();
    const event = await resumed;
    expect([event.address, event.sessionId, resilient.state]).to.deep.equal([
      two.address,
      resilient.sessionId,
      "connected",
    ]);
    expect(held.map((lock) => lock.lost)).to.deep.equal([false, false, false]);

    const third = client(two.address);
    for (const name of names) expect(await third.tryAcquire(name)).to.equal(null);
    await blocker.release();
    const granted = await pending;
    expect(granted.fencingToken > blocker.fencingToken).to.equal(true);
    for (const lock of [...held, granted]) {
      expect(lock.signal.aborted).to.equal(false);
      await lock.release();
    }
    const again = await third.acquire("kill/a");
    expect(again.fencingToken).to.equal(held[0].fencingToken + 1n);
  });

  it("moves 100 sessions off a draining (SIGTERM) coordinator without losing a lock", async () => {
    const sessions = Array.from({ length: 100 }, () => client([one.address, two.address]));
    const locks: Lock[] = await Promise.all(sessions.map((c, i) => c.acquire(`drain/${i}`)));
    const resumed = Promise.all(sessions.map((c) => nextEvent(c, "resumed", 15_000)));
    const startedAt = performance.now();
    one.process.kill("SIGTERM");
    const events = await resumed;
    const tookMs = performance.now() - startedAt;
    expect(new Set(events.map((e) => e.address))).to.deep.equal(new Set([two.address]));
    expect(locks.filter((lock) => lock.signal.aborted)).to.have.length(0);
    const probe = client(two.address);
    for (const i of [0, 42, 99]) expect(await probe.tryAcquire(`drain/${i}`)).to.equal(null);
    // One drain is a burst of 100 resumes at once: seconds at most, far inside the 15 s lease.
    expect(tookMs).to.be.below(10_000);
  });

  it("notices a connection cut without FIN by HTTP/2 keepalive and resumes on the direct address before the lease ends; the coordinator notices too", async function () {
    this.timeout(40_000);
    const proxy = await TcpProxy.start(one.address);
    try {
      const ttlMs = 15_000;
      const resilient = client([proxy.address, two.address], ttlMs);
      const lock = await resilient.acquire("cut/a");
      const resumed = nextEvent(resilient, "resumed", ttlMs);
      const frozenAt = performance.now();
      proxy.freeze();
      const event = await resumed;
      const noticedAfterMs = performance.now() - frozenAt;
      expect(event.address).to.equal(two.address);
      expect(lock.lost).to.equal(false);
      // HTTP/2 keepalive: a ping every 5 s, dead after 2.5 s without an answer; then one attempt.
      expect(noticedAfterMs).to.be.below(10_000);
      const other = client(two.address);
      expect(await other.tryAcquire("cut/a")).to.equal(null);
      // The coordinator behind the proxy closes the dead connection by its own keepalive.
      await proxy.targetClosed(20_000);
      expect(lock.signal.aborted).to.equal(false);
      await lock.release();
      expect(await other.tryAcquire("cut/a")).to.not.equal(null);
    } finally {
      await proxy.stop();
    }
  });

  it("lets a client paused past its TTL find its locks lost on waking, and its resume expired, while another client holds them", async function () {
    this.timeout(30_000);
    const ttlMs = 2000;
    const names = ["pause/a", "pause/b", "pause/c"];
    const child = spawn(
      process.execPath,
      ["--import", "tsx", CHILD, `${one.address},${two.address}`, String(ttlMs), names.join(",")],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    const output: Record<string, unknown>[] = [];
    child.stdout.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n").filter(Boolean)) output.push(JSON.parse(line));
    });
    const redisClient = new Redis(redis.url);
    try {
      const acquired = await waitForOutput(child, /"event":"acquired","sessionId":"(\w+)"/, 10_000);
      const sessionId = acquired[1];
      child.kill("SIGSTOP");
      const taker = client(two.address, 10_000);
      const taken = await Promise.all(names.map((name) => taker.acquire(name, { waitMs: 10_000 })));
      // The session record lapses with the lease (docs/sessions.md): wait for it, not for a time.
      while ((await redisClient.exists(`turnstile:session:{${sessionId}}`)) === 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await one.kill();
      child.kill("SIGCONT");
      await waitForOutput(child, /"event":"expired"/, 10_000);
      child.stdin.write("report\n");
      await waitForOutput(child, /"event":"report"/, 5000);
      const events = output.map((o) => o.event);
      const expiredAt = events.indexOf("expired");
      const lostEvents = output.filter((o) => o.event === "lost");
      expect(lostEvents.map((o) => o.name).sort()).to.deep.equal(names);
      // Told first: every signal fired on waking, before the resume was even answered.
      expect(events.lastIndexOf("lost")).to.be.below(expiredAt);
      expect(new Set(lostEvents.map((o) => o.lostReason))).to.deep.equal(new Set(["lease-unconfirmed"]));
      expect(output.find((o) => o.event === "expired")?.reason).to.equal("session-ended");
      expect(output.find((o) => o.event === "report")?.state).to.equal("expired");
      for (const lock of taken) expect(lock.lost).to.equal(false);
    } finally {
      child.kill("SIGKILL");
      redisClient.disconnect();
    }
  });
});
