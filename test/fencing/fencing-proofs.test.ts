import { randomBytes } from "node:crypto";
import { EventEmitter, once } from "node:events";
import { readFileSync } from "node:fs";
import { credentials, status } from "@grpc/grpc-js";
import { expect } from "chai";
import { decodeProtectedHeader, importJWK, type JWK, jwtVerify } from "jose";
import { TurnstileClient } from "../../client/index.js";
import {
  type CheckFenceRequest,
  type CheckFenceResponse,
  FenceStatus,
  LockServiceClient,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { FencingKeys } from "../../server/security/fencing/fencing-keys.js";
import { FencingSigner, type ProofHolder } from "../../server/security/fencing/fencing-signer.js";
import { type CoordinatorProcess, spawnCoordinatorWith } from "../harness/coordinator-process.js";
import { type FencingKeyFiles, writeFencingKeys } from "../harness/fencing-keys.js";
import { freePort } from "../harness/free-port.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg } from "../harness/requests.js";
import { runTurnstile } from "../harness/run-turnstile.js";
import { type SecureCoordinator, startSecureCoordinator } from "../harness/secure-coordinator.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { failureOf, unary } from "../harness/unary.js";

/**
 * A signer that records each proof it is asked for (lock#fence) and emits "asked": the cost of proofs
 * is one per grant and nothing else.
 */
class RecordingSigner extends FencingSigner {
  readonly events = new EventEmitter();
  readonly asked: string[] = [];
  override signLater(
    lock: string,
    token: bigint,
    holder: ProofHolder,
    done: (err: Error | null, proof: string) => void,
  ): void {
    this.record(lock, token);
    super.signLater(lock, token, holder, done);
  }

  override sign(lock: string, token: bigint, holder: ProofHolder): string {
    this.record(lock, token);
    return super.sign(lock, token, holder);
  }

  private record(lock: string, token: bigint): void {
    this.asked.push(`${lock}#${token}`);
    this.events.emit("asked");
  }
}

/** A signer whose signing fails, as a broken key would. */
class FailingSigner extends FencingSigner {
  override signLater(
    _lock: string,
    _token: bigint,
    _holder: ProofHolder,
    done: (err: Error | null, proof: string) => void,
  ) {
    queueMicrotask(() => done(new Error("EVP_PKEY_sign failed (secret detail)"), ""));
  }
}

describe("fencing proofs (serve --fencing-key)", () => {
  let redis: TestRedis;
  let keyFiles: FencingKeyFiles;
  let keys: FencingKeys;
  let signer: RecordingSigner;
  let signed: TestCoordinator;
  let plain: TestCoordinator;
  const clients: TurnstileClient[] = [];
  const client = (address: string) => {
    const c = new TurnstileClient(address, { clientName: "proof-test" });
    clients.push(c);
    return c;
  };
  /** The proof's claims and header, verified with the published key by plain `jose`. */
  const verified = async (proof: string) => {
    const jwk = keys.jwks().keys[0] as JWK;
    const { payload, protectedHeader } = await jwtVerify(proof, await importJWK(jwk, "EdDSA"), {
      algorithms: ["EdDSA"],
    });
    return { payload, protectedHeader };
  };

  before(async () => {
    redis = await startRedis();
    keyFiles = writeFencingKeys(2);
    keys = FencingKeys.load(keyFiles.files);
    signer = new RecordingSigner(keys.signing, "proof-test-issuer");
    [signed, plain] = await Promise.all([
      startCoordinator(redis.url, {}, {}, { fencing: signer }),
      startCoordinator(redis.url),
    ]);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  after(async () => {
    await Promise.all([signed.stop(), plain.stop()]);
    await redis.stop();
    keyFiles.remove();
  });

  it("signs each grant: a compact JWS, EdDSA with the first key's kid, binding lock, fence, holder, iat and iss", async () => {
    const before = signer.asked.length;
    const lock = await client(signed.address).acquire("proof/a", { owner: "worker-1" });
    expect(signer.asked.length - before).to.equal(1);
    expect(lock.fencingProof.split(".")).to.have.length(3);
    const { payload, protectedHeader } = await verified(lock.fencingProof);
    expect(protectedHeader).to.deep.equal({ alg: "EdDSA", kid: keys.signing.kid, typ: "JWT" });
    expect(payload).to.include({
      iss: "proof-test-issuer",
      lock: "proof/a",
      fence: lock.fencingToken.toString(),
      owner: "worker-1",
      client: "proof-test",
      caller: "",
    });
    expect(payload.session).to.be.a("string").and.not.equal("");
    expect(payload.iat).to.be.closeTo(Date.now() / 1000, 60);
    await lock.release();
  });

  it("signs a re-entry (same token, its own proof) and each lock of an acquireAll set", async () => {
    const c = client(signed.address);
    const first = await c.acquire("proof/re", { owner: "o" });
    const again = await c.acquire("proof/re", { owner: "o" });
    expect(again.holdCount).to.equal(2);
    expect((await verified(again.fencingProof)).payload).to.include({
      lock: "proof/re",
      fence: first.fencingToken.toString(),
    });
    const before = signer.asked.length;
    const set = await c.acquireAll([{ name: "proof/s1" }, { name: "proof/s2" }, { name: "proof/s3" }]);
    expect(signer.asked.length - before).to.equal(3);
    for (const lock of set.locks) {
      const { payload } = await verified(lock.fencingProof);
      expect(payload).to.include({ lock: lock.name, fence: lock.fencingToken.toString() });
    }
    const releases = signer.asked.length;
    await set.release();
    await again.release();
    await first.release();
    expect(signer.asked.length, "releases sign nothing").to.equal(releases);
  });

  it("never tells a grant it could not sign: the stream ends INTERNAL without the detail, and the lock is granted on", async () => {
    const failing = await startCoordinator(redis.url, {}, {}, { fencing: new FailingSigner(keys.signing) });
    const raw = new RawSession(failing.address);
    try {
      await raw.open(2000);
      raw.send(acquireMsg("r1", "proof/unsigned", { owner: "o" }));
      const ended = await raw.status();
      expect(ended.code).to.equal(status.INTERNAL);
      expect(ended.details).to.not.include("secret detail");
      expect(raw.received.map((r) => r.kind?.$case)).to.not.include("acquired");
      const next = await client(plain.address).acquire("proof/unsigned", { waitMs: 10_000 });
      expect(next.fencingToken).to.be.a("bigint");
      await next.release();
    } finally {
      raw.close();
      await failing.stop();
    }
  });

  it("signs a queued waiter's proof while the release ahead of it runs, before the store has granted it", async () => {
    const own = await startRedis();
    const recording = new RecordingSigner(keys.signing);
    const coordinator = await startCoordinator(own.url, {}, {}, { fencing: recording });
    try {
      const holder = await client(coordinator.address).acquire("ahead/x", { owner: "a" });
      let queued!: () => void;
      const isQueued = new Promise<void>((resolve) => {
        queued = resolve;
      });
      const next = client(coordinator.address).acquire("ahead/x", { owner: "b", onQueued: () => queued() });
      await isQueued;
      const asked = once(recording.events, "asked");
      // Redis is frozen: the release cannot reach it, so a proof asked for now is signed ahead.
      own.process.kill("SIGSTOP");
      let released: Promise<void>;
      try {
        released = holder.release();
        await asked;
        expect(recording.asked.at(-1)).to.equal(`ahead/x#${holder.fencingToken + 1n}`);
      } finally {
        own.process.kill("SIGCONT");
      }
      await released;
      const granted = await next;
      expect((await verified(granted.fencingProof)).payload).to.include({
        lock: "ahead/x",
        fence: (holder.fencingToken + 1n).toString(),
        owner: "b",
      });
      expect(recording.asked, "one signature for the hand-off, the one signed ahead").to.deep.equal([
        `ahead/x#${holder.fencingToken}`,
        `ahead/x#${holder.fencingToken + 1n}`,
      ]);
      await granted.release();
    } finally {
      await coordinator.stop();
      await own.stop();
    }
  });

  it("gives no proof without --fencing-key: the field is empty", async () => {
    const lock = await client(plain.address).acquire("proof/plain");
    expect(lock.fencingProof).to.equal("");
    await lock.release();
  });

  it("names the caller identity (from the bearer token) in the proof", async () => {
    const token = randomBytes(24).toString("base64url");
    const secure: SecureCoordinator = await startSecureCoordinator({
      mtls: false,
      tokens: { "billing-svc": token },
      fencing: signer,
    });
    try {
      const c = new TurnstileClient(secure.address, { tls: { ca: readFileSync(secure.pki.ca) }, token });
      clients.push(c);
      const lock = await c.acquire("billing/x");
      expect((await verified(lock.fencingProof)).payload).to.include({ caller: "billing-svc", lock: "billing/x" });
    } finally {
      await Promise.all(clients.splice(0).map((c) => c.close()));
      await secure.stop();
    }
  });

  describe("CheckFence", () => {
    it("answers CURRENT for a live hold's token, SUPERSEDED with the newer token, UNKNOWN once nobody newer holds it", async () => {
      const c = client(plain.address);
      const a = await c.acquire("fence-check/x");
      expect(await c.checkFence("fence-check/x", a.fencingToken)).to.deep.equal({ status: "current" });
      await a.release();
      expect(await c.checkFence("fence-check/x", a.fencingToken)).to.deep.equal({ status: "unknown" });
      const b = await c.acquire("fence-check/x");
      expect(await c.checkFence("fence-check/x", a.fencingToken)).to.deep.equal({
        status: "superseded",
        newerFencingToken: b.fencingToken,
      });
      expect(await c.checkFence("fence-check/x", b.fencingToken + 5n)).to.deep.equal({ status: "unknown" });
      await b.release();
    });

    it("refuses token 0 and a bad name, naming the field", async () => {
      const c = client(plain.address);
      const zero = await c.checkFence("fence-check/y", 0n).catch((e: Error) => e);
      expect(zero).to.have.property("reason", "invalid-argument");
      expect((zero as Error).message).to.include("check_fence.fencing_token");
      const empty = await c.checkFence("", 1n).catch((e: Error) => e);
      expect((empty as Error).message).to.include("check_fence.name");
    });

    it("is authorized as read on the name", async () => {
      const tokens = { reader: randomBytes(24).toString("base64url"), outsider: randomBytes(24).toString("base64url") };
      const secure = await startSecureCoordinator({
        mtls: false,
        tokens,
        policy: { rules: [{ identities: ["reader"], rights: ["read"], prefixes: ["fc/"] }] },
      });
      try {
        const as = (who: keyof typeof tokens) => {
          const c = new TurnstileClient(secure.address, {
            tls: { ca: readFileSync(secure.pki.ca) },
            token: tokens[who],
          });
          clients.push(c);
          return c;
        };
        expect(await as("reader").checkFence("fc/x", 1n)).to.deep.equal({ status: "unknown" });
        const denied = await as("outsider")
          .checkFence("fc/x", 1n)
          .catch((e: Error) => e);
        expect(denied).to.have.property("reason", "permission-denied");
      } finally {
        await Promise.all(clients.splice(0).map((c) => c.close()));
        await secure.stop();
      }
    });
  });

  describe("the published keys (turnstile serve --http)", () => {
    let serve: CoordinatorProcess;
    let httpPort: number;
    before(async () => {
      httpPort = await freePort();
      serve = await spawnCoordinatorWith([
        "--redis",
        redis.url,
        "--fencing-key",
        keyFiles.files[0],
        "--fencing-key",
        keyFiles.files[1],
        "--http",
        `127.0.0.1:${httpPort}`,
      ]);
    });
    after(async () => {
      await serve.kill();
    });

    it("serves every key at GET /.well-known/jwks.json as OKP Ed25519 with kid, cache headers and an ETag (304 when unchanged)", async () => {
      const url = `http://127.0.0.1:${httpPort}/.well-known/jwks.json`;
      const res = await fetch(url);
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-type")).to.equal("application/jwk-set+json");
      expect(res.headers.get("cache-control")).to.equal("public, max-age=300");
      const body = (await res.json()) as { keys: JWK[] };
      expect(body.keys.map((k) => k.kid)).to.deep.equal(keys.published.map((k) => k.kid));
      for (const k of body.keys) expect(k).to.include({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
      expect(
        body.keys.some((k) => "d" in k),
        "no private part",
      ).to.equal(false);
      const again = await fetch(url, { headers: { "if-none-match": res.headers.get("etag")! } });
      expect(again.status).to.equal(304);
    });

    it("signs with the first --fencing-key: the served process's proofs carry its kid", async () => {
      const lock = await client(serve.address).acquire("proof/served");
      expect(decodeProtectedHeader(lock.fencingProof).kid).to.equal(keys.published[0].kid);
      await lock.release();
    });

    it("`turnstile lock` exports TURNSTILE_FENCING_PROOF, and TURNSTILE_FENCING_PROOFS per name for a set", async () => {
      const script = 'echo "$TURNSTILE_FENCING_TOKEN|$TURNSTILE_FENCING_PROOF"; echo "$TURNSTILE_FENCING_PROOFS"';
      const run = await runTurnstile(["lock", "--server", serve.address, "cli/a", "cli/b", "--", "sh", "-c", script]);
      expect(run.code, run.stderr).to.equal(0);
      const [first, all] = run.stdout.trim().split("\n");
      const [token, proof] = first.split("|");
      expect((await verified(proof)).payload).to.include({ lock: "cli/a", fence: token });
      const proofs = all.split(",").map((entry) => entry.split("="));
      expect(proofs.map(([name]) => name)).to.deep.equal(["cli/a", "cli/b"]);
      expect(proofs[0][1]).to.equal(proof);
      expect((await verified(proofs[1][1])).payload).to.include({ lock: "cli/b" });
    });

    it("`turnstile keys --server` prints the key set", async () => {
      const run = await runTurnstile(["keys", "--server", `127.0.0.1:${httpPort}`]);
      expect(run.code, run.stderr).to.equal(0);
      expect((JSON.parse(run.stdout) as { keys: JWK[] }).keys.map((k) => k.kid)).to.deep.equal(
        keys.published.map((k) => k.kid),
      );
    });
  });

  it("refuses a --fencing-key that is not an Ed25519 private key, naming the flag (exit 2)", async () => {
    const rsa = await runTurnstile(["serve", "--listen", "127.0.0.1:0", "--fencing-key", keyFiles.rsaFile]);
    expect(rsa.code).to.equal(2);
    expect(rsa.stderr).to.match(/fencing-key: .*rsa\.pem is a rsa key; an Ed25519 key is needed/);
    const missing = await runTurnstile(["serve", "--listen", "127.0.0.1:0", "--fencing-key", "/nonexistent.pem"]);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.include("fencing-key: cannot read /nonexistent.pem (ENOENT)");
  });

  it("rejects CheckFence from a raw gRPC caller for token 0 with INVALID_ARGUMENT", async () => {
    const rpc = new LockServiceClient(plain.address, credentials.createInsecure());
    try {
      const err = await failureOf(
        unary<CheckFenceRequest, CheckFenceResponse>(rpc.checkFence.bind(rpc), { name: "x", fencingToken: 0n }),
      );
      expect(err.code).to.equal(status.INVALID_ARGUMENT);
      const ok = await unary<CheckFenceRequest, CheckFenceResponse>(rpc.checkFence.bind(rpc), {
        name: "x",
        fencingToken: 1n,
      });
      expect(ok.status).to.equal(FenceStatus.FENCE_STATUS_UNKNOWN);
    } finally {
      rpc.close();
    }
  });
});
