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

/** A reply handler that notes `what` in `answered` when the reply comes, and passes the reply on. */
const noting =
  (answered: string[], what: string) =>
  <T>(reply: T): T => {
    answered.push(what);
    return reply;
  };

/** Where a RESP write holds an argument equal to `arg` (-1: it does not). */
const argAt = (write: string, arg: string) => write.indexOf(`$${arg.length}\r\n${arg}\r\n`);

/** The session (first ARGV) of a script command as MONITOR shows it: EVALSHA|EVAL sha|text numkeys keys… argv…. */
const sessionOf = (args: string[]) => args[3 + Number(args[2])];

describe("releases first: the scripts of one tick on one connection (LockScripts)", () => {
  const f = useScripts();

  it("writes a release ahead of another session's acquire handed over before it in the same tick", async () => {
    await acquire(f, "L", { session: "s1" });
    expect((await acquire(f, "L", { session: "s2", request: "r2" }))[0]).to.equal(AcquireCode.Queued);
    const watch = await watchCommands(f.server.url);
    try {
      // One tick: s3's acquire is handed over first, then s1's release (two sessions' scripts in one tick).
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

  it("writes a tick's releases and other scripts in one socket write, the releases in front", async () => {
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
    expect(recorder.writes).to.have.length(1);
    const at = (arg: string) => argAt(recorder.writes[0], arg);
    expect([at("s1") >= 0, at("s1") < at("s2"), at("s2") < at("s3")]).to.deep.equal([true, true, true]);
  });

  it("writes a tick without a release, or with releases only, in one socket write", async () => {
    await acquire(f, "L", { session: "s1" });
    await acquire(f, "M", { session: "s2" });
    for (const tick of [
      () => [acquire(f, "X", { session: "s5" }), acquire(f, "Y", { session: "s6" })],
      () => [release(f, "L", { session: "s1" }), release(f, "M", { session: "s2" })],
    ]) {
      const recorder = recordWrites(f.redis);
      try {
        await Promise.all(tick());
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

  it("writes a release and its session's re-acquire in one socket write, the release first and answered first", async () => {
    await acquire(f, "L", { session: "s1" });
    await acquire(f, "L", { session: "s2", request: "r2" });
    const traffic = recordTraffic(f.redis);
    const answered: string[] = [];
    let results: unknown[][];
    try {
      // s1 lets go of L and asks for it again in the same tick.
      results = await Promise.all([
        release(f, "L", { session: "s1" }).then(noting(answered, "release")),
        acquire(f, "L", { session: "s1", request: "r1b" }).then(noting(answered, "acquire")),
      ]);
    } finally {
      traffic.stop();
    }
    const { events } = traffic;
    const writes = events.filter((e) => e !== "read");
    expect(writes).to.have.length(1);
    expect(argAt(writes[0], "s1")).to.be.within(0, argAt(writes[0], "r1b"));
    expect(events.indexOf(writes[0])).to.be.below(events.indexOf("read"));
    expect(answered).to.deep.equal(["release", "acquire"]);
    const [released, again] = results;
    expect(released[0]).to.equal(ReleaseCode.Released);
    expect(released[2]).to.deep.equal(["s2:r2", (released[2] as string[])[1]]);
    expect(again.slice(0, 2)).to.deep.equal([AcquireCode.Queued, 1]);
  });

  it("writes another session's release ahead of an acquire on its lock, in one write: the grant is answered first", async () => {
    await acquire(f, "L", { session: "s1" });
    await acquire(f, "L", { session: "s2", request: "r2" });
    const traffic = recordTraffic(f.redis);
    const answered: string[] = [];
    let results: unknown[][];
    try {
      results = await Promise.all([
        acquire(f, "L", { session: "s3", request: "r3" }).then(noting(answered, "acquire")),
        release(f, "L", { session: "s1" }).then(noting(answered, "release")),
      ]);
    } finally {
      traffic.stop();
    }
    const writes = traffic.events.filter((e) => e !== "read");
    expect(writes).to.have.length(1);
    expect(argAt(writes[0], "s1")).to.be.within(0, argAt(writes[0], "r3"));
    expect(answered).to.deep.equal(["release", "acquire"]);
    const [queued, released] = results;
    expect(released[2]).to.deep.equal(["s2:r2", (released[2] as string[])[1]]);
    expect(queued.slice(0, 2)).to.deep.equal([AcquireCode.Queued, 1]);
  });
});
