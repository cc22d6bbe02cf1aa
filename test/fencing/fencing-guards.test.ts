import { type ChildProcessByStdio, spawn } from "node:child_process";
import { generateKeyPairSync, sign } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { Redis } from "ioredis";
import type { JSONWebKeySet } from "jose";
import pg from "pg";
import { FENCE_WRITE_SCRIPT } from "../../client/fencing/fence-write-script.js";
import {
  FencingProofError,
  JwksFetcher,
  type Lock,
  PostgresFenceGuard,
  RedisFenceGuard,
  TurnstileClient,
  verifyFencingProof,
} from "../../client/index.js";
import { FencingKeys } from "../../server/security/fencing/fencing-keys.js";
import { type CoordinatorProcess, spawnCoordinatorWith } from "../harness/coordinator-process.js";
import { type FencingKeyFiles, writeFencingKeys } from "../harness/fencing-keys.js";
import { freePort } from "../harness/free-port.js";
import { postgresBin, startPostgres, type TestPostgres } from "../harness/postgres-server.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { waitForOutput } from "../harness/wait-for-output.js";

const CHILD = fileURLToPath(new URL("../harness/fenced-writer-child.ts", import.meta.url));
const FORGED_FENCE = (2n ** 63n).toString();

/** The refusal a guarded call failed with; fails the test when it succeeded or failed otherwise. */
async function refusalOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (err) {
    if (err instanceof FencingProofError) return err.refusal;
    throw err;
  }
  throw new Error("the guarded call was not refused");
}

/** A compact JWS claiming `fence` for `lock` under `kid`, signed by a key the coordinators never had. */
function forgedProof(lock: string, fence: string, kid: string): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const input = `${b64({ alg: "EdDSA", kid, typ: "JWT" })}.${b64({
    iss: "turnstile",
    iat: Math.floor(Date.now() / 1000),
    lock,
    fence,
    caller: "",
    client: "mallory",
    session: "s",
    owner: "o",
  })}`;
  const { privateKey } = generateKeyPairSync("ed25519");
  return `${input}.${sign(null, Buffer.from(input), privateKey).toString("base64url")}`;
}

describe("fencing guards (Redis, PostgreSQL) against a paused holder, forged and misdirected proofs, and a rotated key", function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let postgres: TestPostgres | undefined;
  let keyFiles: FencingKeyFiles;
  let keys: FencingKeys;
  /** Signs with key 2 and publishes key 1 too (rotation: key 1 retired). */
  let main: CoordinatorProcess;
  /** Signed with key 1 before the rotation. */
  let retired: CoordinatorProcess;
  let jwksUrl: string;
  let fetcher: JwksFetcher;
  let r: Redis;
  let db: pg.Client | undefined;
  const clients: TurnstileClient[] = [];
  const children: ChildProcessByStdio<Writable, Readable, null>[] = [];
  const client = (address = main.address) => {
    const c = new TurnstileClient(address, { ttlMs: 10_000 });
    clients.push(c);
    return c;
  };

  before(async () => {
    redis = await startRedis();
    if (postgresBin()) postgres = await startPostgres();
    else if (process.env.CI) throw new Error("CI: PostgreSQL is missing (.ci/run installs Debian's postgresql)");
    keyFiles = writeFencingKeys(2);
    keys = FencingKeys.load([keyFiles.files[1], keyFiles.files[0]]);
    const httpPort = await freePort();
    [main, retired] = await Promise.all([
      spawnCoordinatorWith([
        "--redis",
        redis.url,
        "--fencing-key",
        keyFiles.files[1],
        "--fencing-key",
        keyFiles.files[0],
        "--http",
        `127.0.0.1:${httpPort}`,
      ]),
      spawnCoordinatorWith(["--redis", redis.url, "--fencing-key", keyFiles.files[0]]),
    ]);
    jwksUrl = `http://127.0.0.1:${httpPort}/.well-known/jwks.json`;
    fetcher = new JwksFetcher(jwksUrl);
    r = new Redis(redis.url);
    if (postgres) {
      db = new pg.Client(postgres.url);
      await db.connect();
      await new PostgresFenceGuard(fetcher).createTable(db);
      await db.query("CREATE TABLE fenced_rows (id text PRIMARY KEY, value text NOT NULL)");
    }
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        await exited;
      }
    }
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  after(async () => {
    r?.disconnect();
    await db?.end();
    await Promise.all([main?.kill(), retired?.kill()]);
    await Promise.all([redis?.stop(), postgres?.stop()]);
    keyFiles?.remove();
  });

  /** A holder child on `name`, with a short TTL; resolves with it once it holds the lock. */
  const holder = async (name: string) => {
    const args = ["--import", "tsx", CHILD, main.address, name, "1500", jwksUrl, redis.url];
    if (postgres) args.push(postgres.url);
    const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] });
    children.push(child);
    const acquired = await waitForOutput(child, /"event":"acquired","token":"(\d+)"/, 15_000);
    return { child, token: BigInt(acquired[1]) };
  };
  /** Sends one write command to the child and returns its answer line. */
  const childWrites = async (child: ChildProcessByStdio<Writable, Readable, null>, command: string) => {
    const answer = waitForOutput(child, /\{"event":"(written|refused)"(?:,"refusal":"([a-z-]+)")?[^\n]*\n/, 15_000);
    child.stdin.write(`${command}\n`);
    const match = await answer;
    return { event: match[1], refusal: match[2] };
  };
  /** One PostgreSQL transaction of the guard's check and the row's update. */
  const pgWrite = async (proof: string, lock: string, resource: string, value: string) => {
    await db!.query("BEGIN");
    try {
      await new PostgresFenceGuard(fetcher).check(db!, proof, { resource, lock });
      await db!.query("UPDATE fenced_rows SET value = $2 WHERE id = $1", [resource, value]);
      await db!.query("COMMIT");
    } catch (err) {
      await db!.query("ROLLBACK");
      throw err;
    }
  };
  const rowValue = async (id: string) =>
    ((await db!.query("SELECT value FROM fenced_rows WHERE id = $1", [id])).rows[0] as { value: string }).value;
  const fenceRow = async (id: string) =>
    (
      (await db!.query("SELECT fence::text AS fence FROM turnstile_fences WHERE resource = $1", [id])).rows[0] as
        | { fence: string }
        | undefined
    )?.fence;

  /** A paused holder A: B takes over, writes; A wakes and writes: refused. */
  const pausedHolderScenario = async (store: "redis" | "pg", name: string, resource: string) => {
    const a = await holder(name);
    expect(await childWrites(a.child, `${store} ${resource} from-A-while-holding`)).to.deep.equal({
      event: "written",
      refusal: undefined,
    });
    a.child.kill("SIGSTOP");
    // B waits in the queue until A's lease has run out on the coordinator (A cannot renew it).
    const b = await client().acquire(name, { waitMs: 20_000 });
    expect(b.fencingToken > a.token).to.equal(true);
    if (store === "redis")
      await new RedisFenceGuard(r, fetcher).write(b.fencingProof, { key: resource, value: "from-B", lock: name });
    else await pgWrite(b.fencingProof, name, resource, "from-B");
    a.child.kill("SIGCONT");
    const late = await childWrites(a.child, `${store} ${resource} from-A-after-pause`);
    expect(late).to.deep.equal({ event: "refused", refusal: "stale" });
    return b;
  };

  it("Redis: holder A SIGSTOPped past its lease, B acquires and writes, A wakes and writes: refused (stale), B's value stays", async () => {
    const b = await pausedHolderScenario("redis", "guard/redis", "guarded:redis");
    expect(await r.get("guarded:redis")).to.equal("from-B");
    expect(await r.get(RedisFenceGuard.fenceKey("guarded:redis"))).to.equal(b.fencingToken.toString());
  });

  it("PostgreSQL: holder A SIGSTOPped past its lease, B acquires and writes in its transaction, A wakes and writes: refused, the row keeps B's value", async function () {
    if (!db) return this.skip(); // PostgreSQL is not installed here (CI installs it and fails without it)
    await db.query("INSERT INTO fenced_rows VALUES ('acct', 'initial')");
    const b = await pausedHolderScenario("pg", "guard/pg", "acct");
    expect(await rowValue("acct")).to.equal("from-B");
    expect(await fenceRow("acct")).to.equal(b.fencingToken.toString());
  });

  it("a forged fence = 2^63 without a valid proof is refused (Redis and PostgreSQL), and the resource stays usable", async () => {
    const lock = await client().acquire("guard/forged");
    const guard = new RedisFenceGuard(r, fetcher);
    await guard.write(lock.fencingProof, { key: "guarded:forged", value: "real", lock: "guard/forged" });
    const signingKid = keys.signing.kid;
    // A proof naming a published kid but signed by another key; a bare number; a proof with alg none.
    expect(
      await refusalOf(
        guard.write(forgedProof("guard/forged", FORGED_FENCE, signingKid), {
          key: "guarded:forged",
          value: "forged",
          lock: "guard/forged",
        }),
      ),
    ).to.equal("bad-signature");
    expect(
      await refusalOf(guard.write(FORGED_FENCE, { key: "guarded:forged", value: "forged", lock: "guard/forged" })),
    ).to.equal("malformed");
    const none = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from(`{"lock":"guard/forged","fence":"${FORGED_FENCE}"}`).toString("base64url")}.`;
    expect(
      await refusalOf(guard.write(none, { key: "guarded:forged", value: "forged", lock: "guard/forged" })),
    ).to.equal("malformed");
    expect(await r.get("guarded:forged")).to.equal("real");
    expect(await r.get(RedisFenceGuard.fenceKey("guarded:forged"))).to.equal(lock.fencingToken.toString());
    // Still usable: the next real holder writes.
    await lock.release();
    const next = await client().acquire("guard/forged");
    await guard.write(next.fencingProof, { key: "guarded:forged", value: "next", lock: "guard/forged" });
    expect(await r.get("guarded:forged")).to.equal("next");
    if (db) {
      await db.query("INSERT INTO fenced_rows VALUES ('forged', 'initial')");
      await pgWrite(next.fencingProof, "guard/forged", "forged", "real");
      expect(
        await refusalOf(pgWrite(forgedProof("guard/forged", FORGED_FENCE, signingKid), "guard/forged", "forged", "x")),
      ).to.equal("bad-signature");
      expect(await fenceRow("forged")).to.equal(next.fencingToken.toString());
      await next.release();
      const after = await client().acquire("guard/forged");
      await pgWrite(after.fencingProof, "guard/forged", "forged", "after");
      expect(await rowValue("forged")).to.equal("after");
    }
  });

  it("a valid proof for another lock name is refused (wrong-lock), by both guards", async () => {
    const other: Lock = await client().acquire("guard/other-name");
    const guard = new RedisFenceGuard(r, fetcher);
    expect(
      await refusalOf(guard.write(other.fencingProof, { key: "guarded:named", value: "x", lock: "guard/named" })),
    ).to.equal("wrong-lock");
    expect(await r.exists("guarded:named", RedisFenceGuard.fenceKey("guarded:named"))).to.equal(0);
    if (db) {
      await db.query("INSERT INTO fenced_rows VALUES ('named', 'initial')");
      expect(await refusalOf(pgWrite(other.fencingProof, "guard/named", "named", "x"))).to.equal("wrong-lock");
      expect(await rowValue("named")).to.equal("initial");
    }
  });

  it("a proof signed by the retired key after rotation is accepted while the key is published, and refused (unknown-kid) once it is not", async () => {
    const old = await client(retired.address).acquire("guard/rotated");
    const claims = await new RedisFenceGuard(r, fetcher).write(old.fencingProof, {
      key: "guarded:rotated",
      value: "old-key",
      lock: "guard/rotated",
    });
    expect(claims.kid).to.equal(keys.published[1].kid);
    expect(claims.kid).to.not.equal(keys.signing.kid);
    if (db) {
      await db.query("INSERT INTO fenced_rows VALUES ('rotated', 'initial')");
      await pgWrite(old.fencingProof, "guard/rotated", "rotated", "old-key");
      expect(await rowValue("rotated")).to.equal("old-key");
    }
    const withoutRetired: JSONWebKeySet = { keys: [keys.jwks().keys[0]] };
    expect(await refusalOf(verifyFencingProof(old.fencingProof, withoutRetired))).to.equal("unknown-kid");
  });

  it("the JWKS fetcher caches the keys and fetches again on an unknown kid", async () => {
    let calls = 0;
    // The first answer predates the rotation (key 1 only); the next is the endpoint's.
    const stale = new Response(JSON.stringify({ keys: [keys.jwks().keys[1]] }), { status: 200 });
    const f = new JwksFetcher(jwksUrl, {
      refreshCooldownMs: 0,
      fetch: (async (url: string, init?: RequestInit) => (calls++ === 0 ? stale : fetch(url, init))) as typeof fetch,
    });
    const lock = await client().acquire("guard/fetcher");
    const first = await verifyFencingProof(lock.fencingProof, f, { lock: "guard/fetcher" });
    expect(first.fence).to.equal(lock.fencingToken);
    expect(f.fetches).to.equal(2);
    await verifyFencingProof(lock.fencingProof, f);
    expect(f.fetches, "cached").to.equal(2);
  });

  it("the TypeScript, Go and Java guards run the same script, line for line", () => {
    const lines = (text: string) =>
      text
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l !== "");
    const go = readFileSync(new URL("../../clients/go/fencing/redis_guard.go", import.meta.url), "utf8");
    const java = readFileSync(
      new URL(
        "../../clients/java/src/main/java/io/github/turnstilelocks/client/fencing/RedisFenceGuard.java",
        import.meta.url,
      ),
      "utf8",
    );
    const goScript = /const FenceWriteScript = `([^`]*)`/.exec(go)?.[1] ?? "";
    const javaScript = /FENCE_WRITE_SCRIPT = """([\s\S]*?)""";/.exec(java)?.[1] ?? "";
    expect(lines(goScript)).to.deep.equal(lines(FENCE_WRITE_SCRIPT));
    expect(lines(javaScript)).to.deep.equal(lines(FENCE_WRITE_SCRIPT));
  });
});
