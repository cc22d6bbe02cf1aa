import { expect } from "chai";
import { LockKeyCache } from "../../../server/store/redis/records/lock-key-cache.js";
import { RENEW_LOCKS_PER_SCRIPT, runRenew } from "../../../server/store/redis/scripts/renew.js";
import type { ScriptArg } from "../../../server/store/redis/scripts/runner/lock-scripts.js";
import { ScriptBody } from "../../../server/store/redis/scripts/runner/script-command.js";
import type { RenewLock } from "../../../server/store/store.js";
import { waiterOf } from "../conformance/claims.js";
import { sameSlotNames, slotOf } from "../conformance/set-names.js";

/** One renew.lua the store sent: its keys and ARGV. */
interface Sent {
  keys: readonly string[];
  args: ScriptArg[];
}

/**
 * How RedisStore.renew splits a keepalive into renew.lua calls (one per Redis, per Cluster slot, in runs
 * of RENEW_LOCKS_PER_SCRIPT) and puts the answers back in the caller's order; `run` here answers as the
 * script would for live entries ("1 1" per owner, 1 per waiter) without Redis (the script itself:
 * test/store/scripts/renew.test.ts; every store: test/store/conformance).
 */
describe("runRenew (RedisStore.renew)", () => {
  const lockKeys = new LockKeyCache("t");

  /**
   * The scripts and the separate touches of session records sent; a record is alive unless in `lapsed`,
   * and a script given one's key (4n + 1 keys) answers that last.
   */
  function recorder(fail?: (s: Sent) => Error | undefined, lapsed: string[] = []) {
    const sent: Sent[] = [];
    const touched: string[] = [];
    const alive = (id: string) => !lapsed.includes(id);
    const run = async (keys: readonly string[], args: ScriptArg[]) => {
      sent.push({ keys, args });
      const error = fail?.({ keys, args });
      if (error) throw error;
      const reply: (string | number)[] = [];
      for (let at = 3; at < args.length; ) {
        const [h, w] = [Number(args[at]), Number(args[at + 1])];
        for (let i = 0; i < h; i++) reply.push("1 1");
        for (let i = 0; i < w; i++) reply.push(1);
        at += 2 + h + 2 * w;
      }
      if (keys.length % 4 === 1) reply.push(alive(String(args[0])) ? 1 : 0);
      return reply;
    };
    const sessions = {
      key: (id: string) => `t:session:{${id}}`,
      touch: async (id: string, ttlMs: number) => {
        touched.push(`${id} ${ttlMs}`);
        return alive(id);
      },
    };
    const deps = (cluster: boolean) => ({ lockKeys, fenceRetainMs: 60_000, cluster, sessions });
    return { sent, touched, run, deps };
  }

  const lock = (name: string, owners = ["o"], waiters: string[] = []): RenewLock => ({
    name,
    owners,
    waiters: waiters.map((r) => waiterOf(name, "s1", r)),
  });

  it("sends one script for every lock on one Redis: 4 keys per lock, counts then owners then pairs", async () => {
    const { sent, run, deps } = recorder();
    const locks = [lock("a"), lock("b", [], ["r1", "r2"]), lock("c", ["o1", "o2"], ["r3"])];
    const outcomes = (await runRenew({ sessionId: "s1", ttlMs: 9_000, locks }, deps(false), run)).locks;
    expect(sent).to.have.length(1);
    expect(sent[0].keys).to.deep.equal(
      ["a", "b", "c"].flatMap((n) => ["holders", "leases", "fence", "data"].map((k) => `t:{${n}}:${k}`)),
    );
    expect(sent[0].args).to.deep.equal([
      "s1",
      9_000,
      60_000,
      1,
      0,
      "o",
      0,
      2,
      "r1",
      "o",
      "r2",
      "o",
      2,
      1,
      "o1",
      "o2",
      "r3",
      "o",
    ]);
    expect(outcomes).to.deep.equal([
      { holds: [{ token: 1n, count: 1 }], waiters: [] },
      { holds: [], waiters: ["queued", "queued"] },
      {
        holds: [
          { token: 1n, count: 1 },
          { token: 1n, count: 1 },
        ],
        waiters: ["queued"],
      },
    ]);
  });

  it(`splits a session's locks into scripts of at most ${RENEW_LOCKS_PER_SCRIPT}`, async () => {
    const { sent, run, deps } = recorder();
    const locks = Array.from({ length: 2 * RENEW_LOCKS_PER_SCRIPT + 1 }, (_, i) => lock(`n${i}`));
    const outcomes = (await runRenew({ sessionId: "s1", ttlMs: 9_000, locks }, deps(false), run)).locks;
    expect(sent.map((s) => s.keys.length / 4)).to.deep.equal([RENEW_LOCKS_PER_SCRIPT, RENEW_LOCKS_PER_SCRIPT, 1]);
    expect(outcomes).to.have.length(locks.length);
  });

  it("on Cluster sends one script per hash slot and answers in the caller's order", async () => {
    const { sent, run, deps } = recorder();
    const [x1, x2] = sameSlotNames("x", 2);
    const other = ["y", "z", "w"].find((n) => slotOf(n) !== slotOf(x1))!;
    const locks = [lock(x1), lock(other, [], ["r"]), lock(x2, ["o1", "o2"])];
    const outcomes = (await runRenew({ sessionId: "s1", ttlMs: 9_000, locks }, deps(true), run)).locks;
    expect(sent.map((s) => s.keys.filter((k) => k.endsWith(":holders")))).to.deep.equal([
      [`t:{${x1}}:holders`, `t:{${x2}}:holders`],
      [`t:{${other}}:holders`],
    ]);
    expect(outcomes.map((o) => [o.holds.length, o.waiters.length])).to.deep.equal([
      [1, 0],
      [0, 1],
      [2, 0],
    ]);
  });

  it("on Cluster sends every slot's script even when one fails, then rejects with that failure", async () => {
    const down = new Error("the master of this slot is down");
    const { sent, run, deps } = recorder((s) => (s.keys[0] === "t:{a}:holders" ? down : undefined));
    const other = ["b", "c", "d"].find((n) => slotOf(n) !== slotOf("a"))!;
    const renewal = runRenew({ sessionId: "s1", ttlMs: 9_000, locks: [lock("a"), lock(other)] }, deps(true), run);
    const error = await renewal.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.equal(down);
    expect(sent).to.have.length(2);
  });

  it("with touchSession on one Redis, the first script alone takes the session record's key (last) and answers for it", async () => {
    const { sent, touched, run, deps } = recorder();
    const locks = Array.from({ length: RENEW_LOCKS_PER_SCRIPT + 1 }, (_, i) => lock(`n${i}`));
    const renewed = await runRenew({ sessionId: "s1", ttlMs: 9_000, locks, touchSession: true }, deps(false), run);
    expect(sent.map((s) => s.keys.length)).to.deep.equal([4 * RENEW_LOCKS_PER_SCRIPT + 1, 4]);
    expect(sent[0].keys.at(-1)).to.equal("t:session:{s1}");
    expect(renewed.sessionAlive).to.equal(true);
    expect(renewed.locks.map((o) => o.holds.length)).to.deep.equal(locks.map(() => 1));
    expect(touched, "no PEXPIRE of its own").to.deep.equal([]);
  });

  it("with touchSession on one Redis, answers a lapsed record as not alive", async () => {
    const { run, deps } = recorder(undefined, ["s1"]);
    const renewed = await runRenew(
      { sessionId: "s1", ttlMs: 9_000, locks: [lock("a")], touchSession: true },
      deps(false),
      run,
    );
    expect(renewed).to.deep.equal({ locks: [{ holds: [{ token: 1n, count: 1 }], waiters: [] }], sessionAlive: false });
  });

  it("with touchSession on Cluster, or with no lock, touches the record beside the scripts", async () => {
    const clustered = recorder(undefined, ["s1"]);
    const args = { sessionId: "s1", ttlMs: 9_000, locks: [lock("a")], touchSession: true };
    expect((await runRenew(args, clustered.deps(true), clustered.run)).sessionAlive).to.equal(false);
    expect(clustered.sent.map((s) => s.keys.length)).to.deep.equal([4]);
    expect(clustered.touched).to.deep.equal(["s1 9000"]);
    const alone = recorder();
    const none = await runRenew({ ...args, locks: [] }, alone.deps(false), alone.run);
    expect([none, alone.sent, alone.touched]).to.deep.equal([{ locks: [], sessionAlive: true }, [], ["s1 9000"]]);
  });

  it("with touchSession on Cluster, answers the scripts' outcomes with the record touch's failure beside them", async () => {
    const { run, deps } = recorder();
    const down = new Error("the record's master is down");
    const sessions = { ...deps(true).sessions, touch: async () => Promise.reject(down) };
    const args = { sessionId: "s1", ttlMs: 9_000, locks: [lock("a"), lock("b", [], ["r1"])], touchSession: true };
    const renewed = await runRenew(args, { ...deps(true), sessions }, run);
    expect(renewed.locks).to.deep.equal([
      { holds: [{ token: 1n, count: 1 }], waiters: [] },
      { holds: [], waiters: ["queued"] },
    ]);
    expect(renewed.touchError?.reason).to.equal(down);
    expect(renewed.sessionAlive).to.equal(undefined);
  });

  it("without touchSession, touches no record and answers no sessionAlive", async () => {
    const { sent, touched, run, deps } = recorder();
    const renewed = await runRenew({ sessionId: "s1", ttlMs: 9_000, locks: [lock("a")] }, deps(false), run);
    expect([sent[0].keys.length, touched, "sessionAlive" in renewed]).to.deep.equal([4, [], false]);
  });

  it("sends a frozen list's body, built once, with the bytes its keys and ARGV make; anything else builds anew", async () => {
    const { sent, run, deps } = recorder();
    const ran: ScriptBody[] = [];
    const bodies = {
      kept: new WeakMap(),
      run: async (body: ScriptBody) => {
        ran.push(body);
        return ["1 1", "1 1", "2 3", 1];
      },
    };
    const withBodies = { ...deps(false), bodies };
    const locks = Object.freeze([Object.freeze(lock("a")), Object.freeze(lock("c", ["o1", "o2"]))]);
    const args = { sessionId: "s1", ttlMs: 9_000, locks, touchSession: true };
    const first = await runRenew(args, withBodies, run);
    expect(await runRenew(args, withBodies, run)).to.deep.equal(first);
    expect(first).to.deep.equal({
      locks: [
        { holds: [{ token: 1n, count: 1 }], waiters: [] },
        {
          holds: [
            { token: 1n, count: 1 },
            { token: 2n, count: 3 },
          ],
          waiters: [],
        },
      ],
      sessionAlive: true,
    });
    expect([sent.length, ran.length, ran[1]], "one body, sent twice").to.deep.equal([0, 2, ran[0]]);
    await runRenew({ ...args, locks: [...locks] }, withBodies, run);
    expect([sent.length, ran.length], "a list not frozen: keys and ARGV").to.deep.equal([1, 2]);
    expect(new ScriptBody(sent[0].keys, sent[0].args).resp.toString()).to.equal(ran[0].resp.toString());
    await runRenew({ ...args, ttlMs: 8_000 }, withBodies, run);
    await runRenew({ ...args, sessionId: "s2" }, withBodies, run);
    expect(new Set(ran).size, "another TTL or session: another body").to.equal(3);
  });
});
