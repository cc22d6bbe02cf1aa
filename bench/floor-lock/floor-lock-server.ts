// The floor lock's server: `node --import tsx bench/floor-lock/floor-lock-server.ts REDIS_URL`.
// A floor under any FIFO lock coordinator of Turnstile's shape (Node, grpc-js, its state in Redis, the
// grant pushed): the least work such a coordinator does. grpc-js on raw bytes (no protobuf, validation,
// sessions, leases, tokens, Queued answers or events), a FIFO queue per name in this process's memory,
// and one EVALSHA of the echo floor's trivial script per request before it takes effect, where a
// coordinator that keeps its state in Redis runs its script. A release's grant is written to the next
// waiter before the release's own answer (releases first). Not a lock to run: it forgets everything on a
// restart and trusts every byte. With --queued after the URL it also answers a waiting acquire with
// Queued, as Turnstile's protocol does. Prints "listening PORT"; exits on SIGTERM.
import { Server, type ServerDuplexStream } from "@grpc/grpc-js";
import { Redis } from "ioredis";
import { TRIVIAL_SCRIPT } from "../anatomy/floors.js";
import { listenOnFreePort, rawBidiMethod } from "../env/raw-bytes-server.js";
import { FLOOR_LOCK_PATH, GRANTED, OP_ACQUIRE, OP_RELEASE, QUEUED, RELEASED } from "./floor-lock-wire.js";

type Call = ServerDuplexStream<Buffer, Buffer>;

/** One held name's holder and its waiters in order of arrival (a name nobody holds is not in the map). */
interface FloorLock {
  holder: Call;
  waiters: Call[];
}

const redis = new Redis(process.argv[2] ?? "redis://127.0.0.1:6379");
const sha = (await redis.script("LOAD", TRIVIAL_SCRIPT)) as string;
const locks = new Map<string, FloorLock>();
const answerQueued = process.argv[3] === "--queued";

/** The lock passes to the longest waiter, or is dropped when nobody waits. */
function handOn(name: string, lock: FloorLock): void {
  const next = lock.waiters.shift();
  if (!next) return void locks.delete(name);
  lock.holder = next;
  next.write(GRANTED);
}

function session(call: Call): void {
  call.on("data", (m: Buffer) => {
    const name = m.toString("latin1", 1);
    const op = m[0];
    // Redis answers in the order it was asked, so acquires and releases take effect in arrival order.
    redis.evalsha(sha, 1, `floor:${name}`, "v").then(
      () => {
        const lock = locks.get(name);
        if (op === OP_ACQUIRE && !lock) {
          locks.set(name, { holder: call, waiters: [] });
          call.write(GRANTED);
        } else if (op === OP_ACQUIRE && lock) {
          // A lock in the map has a holder: handOn drops the name when nobody waits.
          lock.waiters.push(call);
          if (answerQueued) call.write(QUEUED);
        } else if (op === OP_RELEASE && lock?.holder === call) {
          handOn(name, lock);
          call.write(RELEASED);
        }
      },
      (err) => call.destroy(err as Error),
    );
  });
  // A session that goes away lets go of what it holds and leaves every queue.
  call.on("close", () => {
    for (const [name, lock] of locks) {
      lock.waiters = lock.waiters.filter((w) => w !== call);
      if (lock.holder === call) handOn(name, lock);
    }
  });
  call.on("end", () => call.end());
  call.on("error", () => {});
}

const server = new Server();
server.addService({ lock: rawBidiMethod(FLOOR_LOCK_PATH) }, { lock: session });
listenOnFreePort(server, redis);
