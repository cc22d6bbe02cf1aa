// The floor under a Turnstile request, as a server: `node --import tsx bench/anatomy/echo-server.ts REDIS_URL`.
// One grpc-js service with two bidi methods on raw bytes (no protobuf): Echo writes each message
// back; EchoEval first runs one EVALSHA of a trivial two-call script (ioredis), then writes it back.
// Each reply is the message followed by four monotonic timestamps (ns, BigUint64): read, script
// sent, script answered, about to write. Cpu (unary) answers this process's CPU time so far (µs,
// BigUint64: user + system), so the floors can say what a trip costs the server. Prints "listening
// PORT"; exits on SIGTERM.
import { Server, type ServerDuplexStream } from "@grpc/grpc-js";
import { Redis } from "ioredis";
import { listenOnFreePort, rawBidiMethod } from "../env/raw-bytes-server.js";
import { TRIVIAL_SCRIPT } from "./floors.js";

/** The message with the four timestamps appended. */
function stamped(message: Buffer, read: bigint, sent: bigint, answered: bigint): Buffer {
  const out = Buffer.allocUnsafe(message.length + 32);
  message.copy(out);
  out.writeBigUInt64LE(read, message.length);
  out.writeBigUInt64LE(sent, message.length + 8);
  out.writeBigUInt64LE(answered, message.length + 16);
  out.writeBigUInt64LE(process.hrtime.bigint(), message.length + 24);
  return out;
}

const redis = new Redis(process.argv[2] ?? "redis://127.0.0.1:6379");
const sha = (await redis.script("LOAD", TRIVIAL_SCRIPT)) as string;
const server = new Server();
type Call = ServerDuplexStream<Buffer, Buffer>;
server.addService(
  {
    echo: rawBidiMethod("/bench.Echo/Echo"),
    echoEval: rawBidiMethod("/bench.Echo/EchoEval"),
    cpu: { ...rawBidiMethod("/bench.Echo/Cpu"), requestStream: false, responseStream: false },
  },
  {
    cpu(_call: unknown, callback: (err: null, reply: Buffer) => void) {
      const { user, system } = process.cpuUsage();
      const out = Buffer.alloc(8);
      out.writeBigUInt64LE(BigInt(user + system));
      callback(null, out);
    },
    echo(call: Call) {
      call.on("data", (m: Buffer) => {
        const read = process.hrtime.bigint();
        call.write(stamped(m, read, read, read));
      });
      call.on("end", () => call.end());
    },
    echoEval(call: Call) {
      call.on("data", (m: Buffer) => {
        const read = process.hrtime.bigint();
        redis.evalsha(sha, 1, "bench-echo", "v").then(
          () => call.write(stamped(m, read, read, process.hrtime.bigint())),
          (err) => call.destroy(err as Error),
        );
      });
      call.on("end", () => call.end());
    },
  },
);
listenOnFreePort(server, redis);
