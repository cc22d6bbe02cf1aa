import { expect } from "chai";
import { Redis } from "ioredis";
import { AcquireCode } from "../../../server/store/redis/scripts/acquire.js";
import { ReleaseCode } from "../../../server/store/redis/scripts/release.js";
import { LockScripts, writeHandedOver } from "../../../server/store/redis/scripts/runner/lock-scripts.js";
import { acquire, release, useScripts } from "./script-fixture.js";

/** Every command Redis runs from now on, in the order it runs them (MONITOR): its name and arguments. */
async function watchCommands(
  url: string,
): Promise<{ seen: string[][]; until(n: number): Promise<void>; stop(): void }> {
  const base = new Redis(url);
  const monitor = await base.monitor();
  const seen: string[][] = [];
  let wake = () => {};
  monitor.on("monitor", (_time: string, args: string[], source: string) => {
    // The calls a script makes show up too, from "lua": only what clients sent counts here.
    if (source === "lua") return;
    seen.push(args);
    wake();
  });
  return {
    seen,
    until: (n) =>
      new Promise<void>((resolve) => {
        wake = () => seen.length >= n && resolve();
        wake();
      }),
    stop: () => {
      monitor.disconnect();
      base.disconnect();
    },
  };
}

/** Every socket write `redis` makes from now on, as text (a corked socket's chunks make one write). */
function recordWrites(redis: Redis): { writes: string[]; stop(): void } {
  type Chunks = { chunk: Buffer | string }[];
  const socket = redis.stream as unknown as {
    _writev(chunks: Chunks, cb: () => void): void;
    _write(chunk: Buffer | string, encoding: string, cb: () => void): void;
  };
  const writes: string[] = [];
  const { _writev: writev, _write: write } = socket;
  socket._writev = function (chunks, cb) {
    writes.push(chunks.map((c) => String(c.chunk)).join(""));
    return writev.call(this, chunks, cb);
  };
  socket._write = function (chunk, encoding, cb) {
    writes.push(String(chunk));
    return write.call(this, chunk, encoding, cb);
  };
  return {
    writes,
    stop: () => {
      socket._writev = writev;
      socket._write = write;
    },
  };
}

/** Every socket write (its text) and read ("read") of `redis` from now on, in the order they happen. */
function recordTraffic(redis: Redis): { events: string[]; stop(): void } {
  const writes = recordWrites(redis);
  const events: string[] = [];
  const seen = writes.writes;
  // The writes land in their own list: mirror each into `events` as it is made, beside the reads.
  const push = seen.push.bind(seen);
  seen.push = (...items: string[]) => {
    events.push(...items);
    return push(...items);
  };
  const onRead = () => events.push("read");
  redis.stream.prependListener("data", onRead);
  return {
    events,
    stop: () => {
      redis.stream.off("data", onRead);
      writes.stop();
    },
  };
}

/**
 * Runs `body` while Redis holds back every script it is sent (CLIENT PAUSE WRITE, from a connection of
 * its own); `unpause` lets them run. Unpaused at the end whatever happens.
 */
async function whilePaused(url: string, body: (unpause: () => Promise<unknown>) => Promise<void>): Promise<void> {
  const admin = new Redis(url);
  const unpause = () => admin.call("CLIENT", "UNPAUSE");
  try {
    await admin.call("CLIENT", "PAUSE", "60000", "WRITE");
    await body(unpause);
  } finally {
    await unpause().catch(() => {});
    admin.disconnect();
  }
}

/** Resolves after the end of this turn of the event loop, once the scripts handed over in it were written. */
const turnEnd = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

/** Whether a RESP write holds an argument equal to `arg`. */
const holds = (write: string, arg: string) => write.includes(`$${arg.length}\r\n${arg}\r\n`);

/** The session (first ARGV) of a script command as MONITOR shows it: EVALSHA|EVAL sha|text numkeys keys… argv…. */
const sessionOf = (args: string[]) => args[3 + Number(args[2])];

describe("releases first: the scripts of one turn on one connection (LockScripts)", () => {
  const f = useScripts();

  it("writes a release ahead of another session's acquire handed over before it in the same turn", async () => {
    await acquire(f, "L", { session: "s1" });
    expect((await acquire(f, "L", { session: "s2", request: "r2" }))[0]).to.equal(AcquireCode.Queued);
    const watch = await watchCommands(f.server.url);
    try {
      // One turn: s3's acquire is handed over first, then s1's release (as one read of two sessions' messages).
      const queued = acquire(f, "L", { session: "s3", request: "r3" });
      const released = release(f, "L", { session: "s1" });
      const [a, r] = await Promise.all([queued, released]);
      await watch.until(2);
      expect(watch.seen.map(sessionOf)).to.deep.equal(["s1", "s3"]);
      // The release ran first: it granted s2, and s3 queued first in line behind the new holder (not second).
      expect(r[0]).to.equal(ReleaseCode.Released);
      expect(r[2]).to.deep.equal(["s2:r2", (r[2] as string[])[1]]);
      expect(a.slice(0, 2)).to.deep.equal([AcquireCode.Queued, 1]);
    } finally {
      watch.stop();
    }
  });

  it("writes the releases in front in a socket write of their own, the rest in the next", async () => {
    await acquire(f, "L", { session: "s1" });
    await acquire(f, "M", { session: "s2" });
    await acquire(f, "L", { session: "s4", request: "r4" });
    const recorder = recordWrites(f.redis);
    try {
      await Promise.all([
        acquire(f, "L", { session: "s3", request: "r3" }),
        release(f, "L", { session: "s1" }),
        release(f, "M", { session: "s2" }),
      ]);
    } finally {
      recorder.stop();
    }
    const [first, second, ...rest] = recorder.writes;
    expect(rest).to.deep.equal([]);
    expect([holds(first, "s1"), holds(first, "s2"), holds(first, "s3")]).to.deep.equal([true, true, false]);
    expect([holds(second, "s1"), holds(second, "s2"), holds(second, "s3")]).to.deep.equal([false, false, true]);
  });

  it("writes a turn without a release, or with releases only, in one socket write", async () => {
    await acquire(f, "L", { session: "s1" });
    await acquire(f, "M", { session: "s2" });
    for (const turn of [
      () => [acquire(f, "X", { session: "s5" }), acquire(f, "Y", { session: "s6" })],
      () => [release(f, "L", { session: "s1" }), release(f, "M", { session: "s2" })],
    ]) {
      const recorder = recordWrites(f.redis);
      try {
        await Promise.all(turn());
      } finally {
        recorder.stop();
      }
      expect(recorder.writes).to.have.length(1);
    }
  });

  it("keeps one session's order: a release never goes ahead of an earlier script of its own session", async () => {
    await acquire(f, "L", { session: "s1" });
    await acquire(f, "M", { session: "s9" });
    const watch = await watchCommands(f.server.url);
    try {
      // Handed over: s2 waits on M, s1 takes L a second time, s3 waits on L, s1 lets go of one hold of L.
      const calls = [
        acquire(f, "M", { session: "s2", request: "r2" }),
        acquire(f, "L", { session: "s1", request: "r1b" }),
        acquire(f, "L", { session: "s3", request: "r3" }),
        release(f, "L", { session: "s1" }),
      ];
      const [, again, , r] = await Promise.all(calls);
      await watch.until(4);
      // The release goes ahead of s3 (another session) but stays behind s1's own acquire.
      expect(watch.seen.map(sessionOf)).to.deep.equal(["s2", "s1", "s1", "s3"]);
      expect([again[0], again[2]]).to.deep.equal([AcquireCode.Granted, 2]);
      // s1 held L twice and let go of once: it still holds it (a release moved ahead would have freed it).
      expect(r.slice(0, 2)).to.deep.equal([ReleaseCode.Released, 1]);
    } finally {
      watch.stop();
    }
  });

  it("keeps releases in the order they came among themselves", async () => {
    for (const s of ["s1", "s2"]) await acquire(f, `L${s}`, { session: s });
    const watch = await watchCommands(f.server.url);
    try {
      const calls = [
        acquire(f, "X", { session: "s5" }),
        release(f, "Ls1", { session: "s1" }),
        acquire(f, "Y", { session: "s6" }),
        release(f, "Ls2", { session: "s2" }),
      ];
      await Promise.all(calls);
      await watch.until(4);
      expect(watch.seen.map(sessionOf)).to.deep.equal(["s1", "s2", "s5", "s6"]);
    } finally {
      watch.stop();
    }
  });

  it("writes the scripts handed over so far before a command sent after writeHandedOver (a WAIT follows what it covers)", async () => {
    const watch = await watchCommands(f.server.url);
    try {
      const granted = acquire(f, "L", { session: "s1" });
      writeHandedOver(f.redis);
      const pong = f.redis.ping();
      await Promise.all([granted, pong]);
      await watch.until(2);
      expect(watch.seen.map((c) => c[0].toLowerCase().replace("evalsha", "eval"))).to.deep.equal(["eval", "ping"]);
    } finally {
      watch.stop();
    }
  });

  it("holds an acquire of a lock released in the same turn back until Redis has answered the release", async () => {
    await acquire(f, "L", { session: "s1" });
    await acquire(f, "L", { session: "s2", request: "r2" });
    const traffic = recordTraffic(f.redis);
    let results: unknown[][];
    try {
      // A hand-off released at once: s1 lets go of L and asks for it again in the same turn.
      results = await Promise.all([
        release(f, "L", { session: "s1" }),
        acquire(f, "L", { session: "s1", request: "r1b" }),
      ]);
    } finally {
      traffic.stop();
    }
    const { events } = traffic;
    const releaseAt = events.findIndex((e) => e !== "read" && holds(e, "s1") && !holds(e, "r1b"));
    const acquireAt = events.findIndex((e) => e !== "read" && holds(e, "r1b"));
    const answerAt = events.indexOf("read", releaseAt);
    // Written alone, answered, and only then the acquire: Redis never ran it ahead of the release's reply.
    expect([releaseAt >= 0, releaseAt < answerAt, answerAt < acquireAt]).to.deep.equal([true, true, true]);
    const [released, again] = results;
    expect(released[0]).to.equal(ReleaseCode.Released);
    expect(released[2]).to.deep.equal(["s2:r2", (released[2] as string[])[1]]);
    expect(again.slice(0, 2)).to.deep.equal([AcquireCode.Queued, 1]);
  });

  it("holds a held-back session's later scripts and lock's behind it, and writes other sessions' at once", async () => {
    await acquire(f, "L", { session: "s1" });
    await acquire(f, "L", { session: "s2", request: "r2" });
    const recorder = recordWrites(f.redis);
    let watch: Awaited<ReturnType<typeof watchCommands>> | undefined;
    try {
      await whilePaused(f.server.url, async (unpause) => {
        watch = await watchCommands(f.server.url);
        const released = release(f, "L", { session: "s1" });
        const again = acquire(f, "L", { session: "s1", request: "r1b" });
        await turnEnd();
        // A later turn: s1 withdraws that acquire, s3 waits on L, s8 takes another lock.
        const withdrawn = release(f, "L", { session: "s1", request: "r1b" });
        const queued = acquire(f, "L", { session: "s3", request: "r3" });
        const other = acquire(f, "N", { session: "s8" });
        await turnEnd();
        const before = recorder.writes.map((w) => ["s1", "r1b", "r3", "s8"].filter((a) => holds(w, a)));
        expect(before).to.deep.equal([["s1"], ["s8"]]);
        await unpause();
        const [r, a, w, q] = await Promise.all([released, again, withdrawn, queued, other]);
        await watch.until(5);
        expect(watch.seen.map(sessionOf)).to.deep.equal(["s1", "s8", "s1", "s1", "s3"]);
        expect(recorder.writes.slice(2).map((w) => ["r1b", "r3"].filter((x) => holds(w, x)))).to.deep.equal([
          ["r1b", "r3"],
        ]);
        expect([r[0], a[0], w[0], q.slice(0, 2)]).to.deep.equal([
          ReleaseCode.Released,
          AcquireCode.Queued,
          ReleaseCode.Withdrawn,
          [AcquireCode.Queued, 1],
        ]);
      });
    } finally {
      recorder.stop();
      watch?.stop();
    }
  });

  it("writes the scripts held back before a command sent after writeHandedOver", async () => {
    await acquire(f, "L", { session: "s1" });
    const recorder = recordWrites(f.redis);
    try {
      await whilePaused(f.server.url, async (unpause) => {
        const done = [release(f, "L", { session: "s1" }), acquire(f, "L", { session: "s1", request: "r1b" })];
        await turnEnd();
        expect(recorder.writes.some((w) => holds(w, "r1b"))).to.equal(false);
        writeHandedOver(f.redis);
        expect(recorder.writes.some((w) => holds(w, "r1b"))).to.equal(true);
        await unpause();
        await Promise.all(done);
      });
    } finally {
      recorder.stop();
    }
  });

  it("holds nothing back with holdBack off (a Cluster master's connection): the acquire goes out in the turn", async () => {
    const redis = new Redis(f.server.url);
    const plain = { ...f, redis, scripts: new LockScripts(redis, { holdBack: false }) };
    await acquire(plain, "L", { session: "s1" });
    const recorder = recordWrites(redis);
    try {
      await whilePaused(f.server.url, async (unpause) => {
        const done = [release(plain, "L", { session: "s1" }), acquire(plain, "L", { session: "s1", request: "r1b" })];
        await turnEnd();
        expect(recorder.writes.map((w) => ["s1", "r1b"].filter((a) => holds(w, a)))).to.deep.equal([
          ["s1"],
          ["s1", "r1b"],
        ]);
        await unpause();
        await Promise.all(done);
      });
    } finally {
      recorder.stop();
      redis.disconnect();
    }
  });
});
