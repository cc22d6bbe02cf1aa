import { createHook } from "node:async_hooks";
import { expect } from "chai";
import { Redis } from "ioredis";
import {
  LuaScript,
  SCRIPT_DEADLINES,
  ScriptCommand,
} from "../../../server/store/redis/scripts/runner/script-command.js";
import { startRedis, type TestRedis } from "../../harness/redis-server.js";

const SCRIPT = new LuaScript("return ARGV[1]", 0);

/** Sends one script command on `redis` and returns its reply's promise. */
const send = (redis: Redis, arg: string) =>
  redis.sendCommand(new ScriptCommand(SCRIPT, [], [arg], "utf8")) as Promise<unknown>;

/** How long a settled promise took, and how it ended. */
async function outcome(reply: Promise<unknown>): Promise<{ value?: unknown; error?: string; ms: number }> {
  const start = performance.now();
  try {
    const value = await reply;
    return { value, ms: performance.now() - start };
  } catch (err) {
    return { error: (err as Error).message, ms: performance.now() - start };
  }
}

describe("script command timeouts: one timer per timeout length (CommandDeadlines)", () => {
  let server: TestRedis;
  let admin: Redis;
  const connections: Redis[] = [];
  const connect = (commandTimeout: number) => {
    const redis = new Redis(server.url, { commandTimeout });
    connections.push(redis);
    return redis;
  };

  before(async () => {
    server = await startRedis();
    admin = new Redis(server.url);
  });
  afterEach(async () => {
    await admin.call("CLIENT", "UNPAUSE");
    for (const c of connections.splice(0)) c.disconnect();
  });
  after(async () => {
    admin.disconnect();
    await server.stop();
  });

  it("fails a script Redis does not answer within the connection's commandTimeout, with ioredis's error", async () => {
    const redis = connect(151);
    expect(await send(redis, "warm")).to.equal("warm");
    await admin.call("CLIENT", "PAUSE", "60000", "WRITE");
    const first = outcome(send(redis, "a"));
    const second = outcome(send(redis, "b"));
    const [a, b] = await Promise.all([first, second]);
    expect([a.error, b.error]).to.deep.equal(["Command timed out", "Command timed out"]);
    // Never before its own deadline (timers fire late, not early; a ms of rounding allowed).
    expect(Math.min(a.ms, b.ms)).to.be.at.least(150);
  });

  it("fails nothing that was answered, and keeps no answered script: the next one sent lets go of them", async () => {
    const redis = connect(103);
    const answered = await Promise.all(Array.from({ length: 20 }, (_, i) => send(redis, `r${i}`)));
    expect(answered).to.deep.equal(Array.from({ length: 20 }, (_, i) => `r${i}`));
    expect(SCRIPT_DEADLINES.watched(103)).to.equal(20);
    await admin.call("CLIENT", "PAUSE", "60000", "WRITE");
    const held = outcome(send(redis, "held"));
    expect(SCRIPT_DEADLINES.watched(103)).to.equal(1);
    expect((await held).error).to.equal("Command timed out");
    expect(SCRIPT_DEADLINES.watched(103)).to.equal(0);
  });

  it("keeps each timeout length apart: a short one fails while a long one, sent first, still waits", async () => {
    const long = connect(60_001);
    const short = connect(107);
    await Promise.all([send(long, "warm"), send(short, "warm")]);
    await admin.call("CLIENT", "PAUSE", "60000", "WRITE");
    let longSettled = false;
    const waiting = send(long, "long").finally(() => {
      longSettled = true;
    });
    expect((await outcome(send(short, "short"))).error).to.equal("Command timed out");
    expect(longSettled).to.equal(false);
    await admin.call("CLIENT", "UNPAUSE");
    expect(await waiting).to.equal("long");
  });

  it("makes no timer per script: 50 scripts in flight together create at most one", async () => {
    const redis = connect(2003);
    await send(redis, "warm");
    let timers = 0;
    const hook = createHook({
      init(_id, type) {
        if (type === "Timeout") timers++;
      },
    }).enable();
    let replies: unknown[];
    try {
      replies = await Promise.all(Array.from({ length: 50 }, (_, i) => send(redis, `t${i}`)));
    } finally {
      hook.disable();
    }
    expect(replies).to.have.length(50);
    expect(timers).to.be.at.most(1);
  });
});
