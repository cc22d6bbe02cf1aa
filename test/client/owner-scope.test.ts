import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { type Lock, TurnstileClient } from "../../client/index.js";
import { ChildEvents } from "../harness/child-events.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

const TRANSFER = fileURLToPath(new URL("../harness/transfer-child.ts", import.meta.url));

/** One naive transfer FROM → TO in its own process (test/harness/transfer-child.ts). */
function transfer(address: string, from: string, to: string, waitMs: number, follow: boolean): ChildEvents {
  const args = ["--import", "tsx", TRANSFER, address, from, to, String(waitMs), String(follow)];
  return new ChildEvents(spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] }));
}

/** Two opposite transfers, each holding its first account before either asks for its second. */
async function crossedTransfers(address: string, waitMs: number, follow: boolean) {
  const ab = transfer(address, "a", "b", waitMs, follow);
  const ba = transfer(address, "b", "a", waitMs, follow);
  try {
    await Promise.all([ab.next("holding"), ba.next("holding")]);
    ab.command("go");
    ba.command("go");
    await Promise.all([ab.next("done", 15_000), ba.next("done", 15_000)]);
    const outcome = (c: ChildEvents) => c.find("transferred") ?? c.find("failed");
    return [outcome(ab), outcome(ba)].map((e) => (e?.event === "failed" ? `failed ${e.reason}` : e?.event));
  } finally {
    await Promise.all([ab.kill(), ba.kill()]);
  }
}

// Owners that follow the work (docs/deadlocks.md): an acquire inside a held lock's withLock callback,
// or inside withOwner(fn), takes that scope's owner when it names none; outside any scope each acquire
// has its own. The naive transfer is then one (session, owner) per process, and the crossed pair is
// a detected deadlock.
describe("owners that follow the work", function () {
  this.timeout(40_000);
  let redis: TestRedis;
  let coord: TestCoordinator;
  const clients: TurnstileClient[] = [];
  const client = (options: ConstructorParameters<typeof TurnstileClient>[1] = {}) => {
    const c = new TurnstileClient(coord.address, options);
    clients.push(c);
    return c;
  };

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  after(async () => {
    await coord.stop();
    await redis.stop();
  });

  it("two processes running the naive transfer the other way round: exactly one DEADLOCK, the other transfers", async () => {
    const outcomes = await crossedTransfers(coord.address, 10_000, true);
    expect(outcomes.sort()).to.deep.equal(["failed deadlock", "transferred"]);
  });

  it("opted out (ownersFollowScope: false): no deadlock is seen, both waits run out", async () => {
    const outcomes = await crossedTransfers(coord.address, 1500, false);
    expect(outcomes).to.deep.equal(["failed timeout", "failed timeout"]);
  });

  it("re-entry follows the owner: a nested withLock on the same name is a second hold of the first", async () => {
    const c = client();
    await c.withLock("scope/re-enter", async (outer) => {
      await c.withLock(
        "scope/re-enter",
        async (inner) => {
          expect([inner.owner, inner.fencingToken, inner.holdCount]).to.deep.equal([
            outer.owner,
            outer.fencingToken,
            2,
          ]);
        },
        { waitMs: 0 },
      );
    });
  });

  it("withOwner(fn) is an explicit scope: its acquires share one owner, across awaits and timers", async () => {
    const c = client();
    const owners = await c.withOwner(
      async () => {
        const first = await c.acquire("scope/explicit-1");
        await new Promise((resolve) => setTimeout(resolve, 1));
        const second = await c.acquire("scope/explicit-2");
        await Promise.all([first.release(), second.release()]);
        return [first.owner, second.owner];
      },
      { owner: "job-42" },
    );
    expect(owners).to.deep.equal(["job-42", "job-42"]);
  });

  it("outside any scope, and with an explicit owner, acquires keep their own owners", async () => {
    const c = client();
    const [x, y] = await Promise.all([c.acquire("scope/free-x"), c.acquire("scope/free-y")]);
    expect(x.owner).to.not.equal(y.owner);
    const inner = await c.withLock("scope/outer", () => c.acquire("scope/own", { owner: "mine" }));
    expect(inner.owner).to.equal("mine");
    const optedOut = client({ ownersFollowScope: false });
    const nested = await optedOut.withLock("scope/opted", () => optedOut.tryAcquire("scope/opted"));
    expect(nested, "opted out, the nested try-once is another owner: the lock is taken").to.equal(null);
    await Promise.all([x, y, inner].map((l: Lock) => l.release()));
  });
});
