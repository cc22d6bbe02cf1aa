// A lock holder that writes through the fencing guards, in its own process, for tests that pause
// (SIGSTOP) it past its lease. Usage: node --import tsx fenced-writer-child.ts ADDRESS NAME TTL_MS
// JWKS_URL REDIS_URL [POSTGRES_URL]. Prints one JSON line per event: "acquired" (token, proof), then
// per command "written" or "refused" (refusal, message). Commands on stdin: "redis KEY VALUE" (a
// RedisFenceGuard write of VALUE to KEY) and "pg RESOURCE VALUE" (in one transaction: the
// PostgresFenceGuard check of RESOURCE, then the row's value set). It writes whether or not its
// lock is still held: it plays a holder that does not know it was paused.
import { createInterface } from "node:readline";
import { Redis } from "ioredis";
import pg from "pg";
import {
  FencingProofError,
  JwksFetcher,
  PostgresFenceGuard,
  RedisFenceGuard,
  TurnstileClient,
} from "../../client/index.js";

const [address, name, ttl, jwksUrl, redisUrl, postgresUrl] = process.argv.slice(2);
const client = new TurnstileClient(address, { ttlMs: Number(ttl) });
const lock = await client.acquire(name);
const keys = new JwksFetcher(jwksUrl);
const redis = new Redis(redisUrl);
const db = postgresUrl ? new pg.Client(postgresUrl) : undefined;
await db?.connect();
const say = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);
say({ event: "acquired", token: String(lock.fencingToken), proof: lock.fencingProof });

for await (const line of createInterface({ input: process.stdin })) {
  const [store, key, value] = line.split(" ");
  try {
    if (store === "redis") await new RedisFenceGuard(redis, keys).write(lock.fencingProof, { key, value, lock: name });
    else await pgWrite(key, value);
    say({ event: "written" });
  } catch (err) {
    if (!(err instanceof FencingProofError)) throw err;
    say({ event: "refused", refusal: err.refusal, message: err.message });
  }
}

async function pgWrite(resource: string, value: string): Promise<void> {
  await db!.query("BEGIN");
  try {
    await new PostgresFenceGuard(keys).check(db!, lock.fencingProof, { resource, lock: name });
    await db!.query("UPDATE fenced_rows SET value = $2 WHERE id = $1", [resource, value]);
    await db!.query("COMMIT");
  } catch (err) {
    await db!.query("ROLLBACK");
    throw err;
  }
}
