import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Client, type ClientDuplexStream, credentials } from "@grpc/grpc-js";
import { Redis } from "ioredis";
import { waitForOutput } from "../../test/harness/wait-for-output.js";
import { rawBytes } from "../env/raw-bytes-server.js";
import { type LatencySummary, summarize } from "../stats.js";

const SERVER = fileURLToPath(new URL("./echo-server.ts", import.meta.url));
/** The script of the EVALSHA floors, as small as a useful script gets: one write, one read. */
export const TRIVIAL_SCRIPT = "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('GET', KEYS[1])";

/** About the size of an acquire or release message on the wire. */
const PAYLOAD_BYTES = 96;

/** One echo trip's legs, in ms, on the machine's monotonic clock. */
export interface EchoLegs {
  /** Client write → server reads it. */
  toServer: LatencySummary;
  /** The server's EVALSHA: handed to ioredis → answered (0 for the plain echo). */
  script: LatencySummary;
  /** Server about to write → client reads it. */
  toClient: LatencySummary;
  /** The whole round trip as the client sees it. */
  roundTrip: LatencySummary;
  /** Mean CPU time per trip (µs) of the echo server's process and of the client's (this) process. */
  cpuUs: { server: number; client: number };
}

/** The bare floors of a Turnstile request on this machine, measured in the same run. */
export interface Floors {
  /** A grpc-js bidi echo between two processes. */
  grpcEcho: EchoLegs;
  /** One EVALSHA of a trivial two-call script, from this process (ioredis). */
  evalsha: LatencySummary;
  /** Mean CPU time of this process per EVALSHA (µs): what ioredis and a socket round trip cost a caller. */
  evalshaCpuUs: number;
  /** The two together: a minimal echo server that runs one EVALSHA per message. */
  grpcEchoEval: EchoLegs;
  /**
   * Mean CPU per echo + EVALSHA trip (µs) with BUSY_STREAMS streams each keeping one trip in flight, as
   * a hand-off's contenders keep the coordinator busy (one trip at a time pays an idle process's wake-ups).
   */
  busyEchoEvalCpuUs: { server: number; client: number };
}

/** Streams in flight for busyEchoEvalCpuUs: the hand-off's contenders. */
export const BUSY_STREAMS = 8;

/** Starts the echo server on `redisUrl` and measures `count` sequential trips of each kind. */
export async function measureFloors(redisUrl: string, count: number): Promise<Floors> {
  const child = spawn(process.execPath, ["--import", "tsx", SERVER, redisUrl], { stdio: ["ignore", "pipe", "pipe"] });
  const redis = new Redis(redisUrl);
  try {
    const port = (await waitForOutput(child, /listening (\d+)/, 15_000))[1];
    const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
    try {
      const grpcEcho = await echoTrips(client, "/bench.Echo/Echo", count);
      const { evalsha, evalshaCpuUs } = await evalshaTrips(redis, count);
      const grpcEchoEval = await echoTrips(client, "/bench.Echo/EchoEval", count);
      const busyEchoEvalCpuUs = await busyTripsCpu(client, "/bench.Echo/EchoEval", count);
      return { grpcEcho, evalsha, evalshaCpuUs, grpcEchoEval, busyEchoEvalCpuUs };
    } finally {
      client.close();
    }
  } finally {
    redis.disconnect();
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
}

async function evalshaTrips(redis: Redis, count: number): Promise<{ evalsha: LatencySummary; evalshaCpuUs: number }> {
  const sha = (await redis.script("LOAD", TRIVIAL_SCRIPT)) as string;
  const us: number[] = [];
  let cpu = 0;
  for (let i = -Math.min(200, count); i < count; i++) {
    if (i === 0) cpu = ownCpuUs();
    const t = process.hrtime.bigint();
    await redis.evalsha(sha, 1, "bench-floor", "v");
    if (i >= 0) us.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return { evalsha: summarize(us), evalshaCpuUs: (ownCpuUs() - cpu) / count };
}

/** This process's CPU time so far, µs (user + system). */
function ownCpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** The echo server's CPU time so far, µs (its Cpu method). */
function serverCpuUs(client: Client): Promise<number> {
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest("/bench.Echo/Cpu", rawBytes, rawBytes, Buffer.alloc(0), (err, reply) =>
      err || !reply ? reject(err ?? new Error("no reply")) : resolve(Number(reply.readBigUInt64LE(0))),
    ),
  );
}

/** CPU per trip of `count` trips over BUSY_STREAMS streams, each with one trip in flight at a time. */
async function busyTripsCpu(client: Client, path: string, count: number): Promise<{ server: number; client: number }> {
  const payload = Buffer.alloc(PAYLOAD_BYTES, 7);
  const perStream = Math.ceil(count / BUSY_STREAMS);
  const run = (trips: number) =>
    Promise.all(
      Array.from({ length: BUSY_STREAMS }, async () => {
        const call: ClientDuplexStream<Buffer, Buffer> = client.makeBidiStreamRequest(path, rawBytes, rawBytes);
        call.on("error", () => {});
        let next: (() => void) | undefined;
        call.on("data", () => next?.());
        try {
          for (let i = 0; i < trips; i++)
            await new Promise<void>((resolve) => {
              next = resolve;
              call.write(payload);
            });
        } finally {
          call.end();
        }
      }),
    );
  await run(Math.min(200, perStream));
  const start = { server: await serverCpuUs(client), client: ownCpuUs() };
  await run(perStream);
  const clientEnd = ownCpuUs();
  const trips = perStream * BUSY_STREAMS;
  return { server: ((await serverCpuUs(client)) - start.server) / trips, client: (clientEnd - start.client) / trips };
}

async function echoTrips(client: Client, path: string, count: number): Promise<EchoLegs> {
  const call: ClientDuplexStream<Buffer, Buffer> = client.makeBidiStreamRequest(path, rawBytes, rawBytes);
  let next: ((reply: Buffer) => void) | undefined;
  call.on("data", (reply: Buffer) => next?.(reply));
  call.on("error", () => {});
  const legs = {
    toServer: [] as number[],
    script: [] as number[],
    toClient: [] as number[],
    roundTrip: [] as number[],
  };
  const payload = Buffer.alloc(PAYLOAD_BYTES, 7);
  let cpuAtStart = { server: 0, client: 0 };
  let cpuUs = { server: 0, client: 0 };
  try {
    for (let i = -Math.min(200, count); i < count; i++) {
      // The server's reading costs it one unary call, outside the trips counted.
      if (i === 0) cpuAtStart = { server: await serverCpuUs(client), client: ownCpuUs() };
      const replied = new Promise<Buffer>((resolve) => {
        next = resolve;
      });
      const sent = process.hrtime.bigint();
      call.write(payload);
      const reply = await replied;
      const received = process.hrtime.bigint();
      if (i < 0) continue;
      const at = (k: number) => reply.readBigUInt64LE(PAYLOAD_BYTES + 8 * k);
      const [read, scriptSent, scriptAnswered, written] = [at(0), at(1), at(2), at(3)];
      legs.toServer.push(Number(read - sent) / 1e6);
      legs.script.push(Number(scriptAnswered - scriptSent) / 1e6);
      legs.toClient.push(Number(received - written) / 1e6);
      legs.roundTrip.push(Number(received - sent) / 1e6);
    }
    const clientEnd = ownCpuUs();
    cpuUs = {
      server: ((await serverCpuUs(client)) - cpuAtStart.server) / count,
      client: (clientEnd - cpuAtStart.client) / count,
    };
  } finally {
    call.end();
  }
  return {
    toServer: summarize(legs.toServer),
    script: summarize(legs.script),
    toClient: summarize(legs.toClient),
    roundTrip: summarize(legs.roundTrip),
    cpuUs,
  };
}
