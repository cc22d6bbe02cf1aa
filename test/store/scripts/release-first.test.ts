import { expect } from "chai";
import { Redis } from "ioredis";
import { AcquireCode } from "../../../server/store/redis/scripts/acquire.js";
import { ReleaseCode } from "../../../server/store/redis/scripts/release.js";
import { writeHandedOver } from "../../../server/store/redis/scripts/runner/lock-scripts.js";
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
});
