import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { status } from "@grpc/grpc-js";
import { expect } from "chai";
import {
  type DescribeRequest,
  type DescribeResponse,
  FailureReason,
  type ListRequest,
  type ListResponse,
  LockServiceClient,
  type RequestReleaseRequest,
  type RequestReleaseResponse,
  type RevokeRequest,
  type RevokeResponse,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { RawSession } from "../harness/raw-session.js";
import { RawWatch } from "../harness/raw-watch.js";
import {
  acquireMsg,
  keepAliveMsg,
  proclaimMsg,
  releaseMsg,
  requestReleaseMsg,
  transferMsg,
} from "../harness/requests.js";
import { type SecureCoordinator, startSecureCoordinator } from "../harness/secure-coordinator.js";
import { clientCredentials } from "../harness/test-pki.js";
import { failureOf, unary } from "../harness/unary.js";

const IDENTITIES = ["billing-svc", "auditor", "ops"] as const;
type Who = (typeof IDENTITIES)[number];
const TOKENS = Object.fromEntries(IDENTITIES.map((id) => [id, randomBytes(32).toString("base64url")])) as Record<
  Who,
  string
>;
const POLICY = {
  rules: [
    { identities: ["billing-svc"], rights: ["lock", "read"], prefixes: ["billing/"] },
    { identities: ["auditor"], rights: ["read"], prefixes: ["billing/"] },
    { identities: ["ops"], rights: ["lock", "read", "admin"], prefixes: [""] },
  ],
};

describe("authorization by the policy (grants on name prefixes)", () => {
  let coord: SecureCoordinator;
  const open: { close(): void }[] = [];
  const creds = (who: Who) => clientCredentials(coord.pki.ca, undefined, TOKENS[who]);
  const session = async (who: Who) => {
    const s = new RawSession(coord.address, creds(who));
    open.push(s);
    await s.open(60_000);
    return s;
  };
  const rpc = (who: Who) => {
    const client = new LockServiceClient(coord.address, creds(who));
    open.push(client);
    return {
      describe: (name: string) => unary<DescribeRequest, DescribeResponse>(client.describe.bind(client), { name }),
      list: (r: ListRequest) => unary<ListRequest, ListResponse>(client.list.bind(client), r),
      revoke: (r: RevokeRequest) => unary<RevokeRequest, RevokeResponse>(client.revoke.bind(client), r),
      requestRelease: (r: RequestReleaseRequest) =>
        unary<RequestReleaseRequest, RequestReleaseResponse>(client.requestRelease.bind(client), r),
    };
  };
  /** Every name `who` lists, walking all pages of one entry. */
  const listAll = async (who: Who, prefix: string) => {
    const names: string[] = [];
    let pageToken = "";
    do {
      const page = await rpc(who).list({ prefix, pageSize: 1, pageToken });
      names.push(...page.locks.map((l) => l.name));
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    return names.sort();
  };

  beforeEach(async () => {
    coord = await startSecureCoordinator({ mtls: false, tokens: TOKENS, policy: POLICY });
  });
  afterEach(async () => {
    for (const c of open.splice(0)) c.close();
    await coord.stop();
  });

  describe("Session", () => {
    it("grants names under a prefix and fails look-alikes with PERMISSION_DENIED naming the name and identity", async () => {
      const s = await session("billing-svc");
      s.send(acquireMsg("ok", "billing/x"));
      await s.next("acquired");
      const outside = [
        "billing-evil/x",
        "billing",
        "billing-x",
        "Billing/x",
        "b\u0456lling/x", // Cyrillic і
        "billing\uff0fx", // fullwidth solidus
        "billing\u2215x", // division slash
        "bi\u0301lling/x", // combining accent
      ];
      for (const [i, name] of outside.entries()) {
        s.send(acquireMsg(`r${i}`, name));
        const { failed } = await s.next("failed", (f) => f.failed.requestId === `r${i}`);
        expect([failed.reason, failed.name], name).to.deep.equal([
          FailureReason.FAILURE_REASON_PERMISSION_DENIED,
          name,
        ]);
        expect(failed.message).to.include(`"${name}"`).and.to.include('"billing-svc"');
      }
      const d = await rpc("ops").describe("billing-evil/x");
      expect(d.holders).to.deep.equal([]);
    });

    it("refuses a name that is too long or not text as INVALID_ARGUMENT naming the field, not as a missing grant", async () => {
      const s = await session("billing-svc");
      const long = `billing/${"x".repeat(300)}`;
      const sends: [string, (name: string) => ReturnType<typeof acquireMsg>, string][] = [
        ["a", (name) => acquireMsg("a", name), "acquire.name"],
        ["r", (name) => releaseMsg("r", name, "o"), "release.name"],
        ["p", (name) => proclaimMsg("p", name, "p", "v"), "proclaim.name"],
        ["q", (name) => requestReleaseMsg("q", name, "why"), "request_release.name"],
      ];
      for (const [id, msg, field] of sends) {
        for (const [i, name] of [long, "", "billing/\u0001"].entries()) {
          s.send(msg(name));
          const { failed } = await s.next("failed", (f) => f.failed.requestId === id);
          expect([failed.reason, failed.message.startsWith(`${field}:`)], `${field} #${i}`).to.deep.equal([
            FailureReason.FAILURE_REASON_INVALID_ARGUMENT,
            true,
          ]);
        }
      }
      const tooLong = new RawWatch(coord.address, long, creds("billing-svc"));
      open.push(tooLong);
      const ended = await tooLong.status();
      expect([ended.code, ended.details]).to.deep.equal([
        status.INVALID_ARGUMENT,
        "watch.name: 308 bytes exceeds the maximum of 256 bytes",
      ]);
    });

    it("leaves the session and its other locks as they were after a forbidden acquire, release or proclaim", async () => {
      const s = await session("billing-svc");
      s.send(acquireMsg("a", "billing/a"));
      const { acquired } = await s.next("acquired");
      s.send(acquireMsg("b", "billing-evil/b"));
      s.send(releaseMsg("c", "billing-evil/b", "b"));
      s.send(proclaimMsg("d", "other/d", "d", "v"));
      for (const id of ["b", "c", "d"]) {
        const { failed } = await s.next("failed", (f) => f.failed.requestId === id);
        expect(failed.reason).to.equal(FailureReason.FAILURE_REASON_PERMISSION_DENIED);
      }
      const d = await rpc("ops").describe("billing/a");
      expect(d.holders.map((h) => [h.owner, h.fencingToken, h.identity])).to.deep.equal([
        ["a", acquired.fencingToken, "billing-svc"],
      ]);
      s.send(keepAliveMsg(1));
      await s.next("keepAliveAck");
      s.send(releaseMsg("e", "billing/a", "a"));
      await s.next("released");
      expect(s.ended).to.equal(undefined);
    });

    it("lets the empty prefix cover every name", async () => {
      const s = await session("ops");
      for (const [i, name] of ["billing-evil/x", "zzz", "b\u0456lling/x"].entries()) {
        s.send(acquireMsg(`r${i}`, name));
        await s.next("acquired", (a) => a.acquired.requestId === `r${i}`);
      }
    });
  });

  describe("Describe and Watch", () => {
    it("need a read grant: PERMISSION_DENIED outside it", async () => {
      const err = await failureOf(rpc("auditor").describe("billing-evil/x"));
      expect(err.code).to.equal(status.PERMISSION_DENIED);
      expect(err.details).to.include('"auditor"').and.to.include('"billing-evil/x"');
      expect((await rpc("auditor").describe("billing/x")).name).to.equal("billing/x");

      const denied = new RawWatch(coord.address, "billing-evil/x", creds("auditor"));
      const allowed = new RawWatch(coord.address, "billing/x", creds("auditor"));
      open.push(denied, allowed);
      expect((await denied.status()).code).to.equal(status.PERMISSION_DENIED);
      expect(denied.received).to.deep.equal([]);
      expect(await allowed.next()).to.have.property("snapshot");
    });
  });

  describe("List", () => {
    it("never shows a name outside the caller's read grants, across pages", async () => {
      const s = await session("ops");
      const names = ["billing/a", "billing/b", "billing-evil/c", "billing", "other/d", "b\u0456lling/e"];
      for (const [i, name] of names.entries()) {
        s.send(acquireMsg(`r${i}`, name));
        await s.next("acquired", (a) => a.acquired.requestId === `r${i}`);
      }
      expect(await listAll("auditor", "")).to.deep.equal(["billing/a", "billing/b"]);
      expect(await listAll("auditor", "billing")).to.deep.equal(["billing/a", "billing/b"]);
      expect(await listAll("auditor", "billing-evil/")).to.deep.equal([]);
      expect(await listAll("ops", "")).to.deep.equal([...names].sort());
    });
  });

  describe("Revoke", () => {
    it("needs an admin grant: PERMISSION_DENIED, and the holder is told nothing", async () => {
      const holder = await session("billing-svc");
      holder.send(acquireMsg("r1", "billing/r"));
      const { acquired } = await holder.next("acquired");
      const sessionId = (await rpc("ops").describe("billing/r")).holders[0].sessionId;
      for (const who of ["auditor", "billing-svc"] as const) {
        const err = await failureOf(rpc(who).revoke({ name: "billing/r", sessionId, owner: "r1" }));
        expect(err.code, who).to.equal(status.PERMISSION_DENIED);
      }
      // The holder's next message after the refusals is its keepalive's ack: no Lost came before it.
      holder.send(keepAliveMsg(7));
      await holder.next("keepAliveAck");
      expect(holder.received).to.deep.equal([]);
      const d = await rpc("ops").describe("billing/r");
      expect(d.holders.map((h) => h.fencingToken)).to.deep.equal([acquired.fencingToken]);

      await rpc("ops").revoke({ name: "billing/r", sessionId, owner: "r1" });
      expect((await holder.next("lost")).lost.name).to.equal("billing/r");
    });
  });

  describe("hand-over (docs/elections.md)", () => {
    it("asks holders only with a lock grant (session) or an admin grant (the admin call); the requester names the identity", async () => {
      const holder = await session("billing-svc");
      holder.send(acquireMsg("r1", "billing/h"));
      await holder.next("acquired");
      const auditor = await session("auditor");
      auditor.send(requestReleaseMsg("q1", "billing/h", "mine now"));
      expect((await auditor.next("failed")).failed.reason).to.equal(FailureReason.FAILURE_REASON_PERMISSION_DENIED);
      auditor.send(transferMsg("t1", "billing/h", "r1"));
      expect((await auditor.next("failed")).failed.reason).to.equal(FailureReason.FAILURE_REASON_PERMISSION_DENIED);
      for (const who of ["auditor", "billing-svc"] as const) {
        const err = await failureOf(rpc(who).requestRelease({ name: "billing/h", reason: "x" }));
        expect(err.code, who).to.equal(status.PERMISSION_DENIED);
      }
      expect(await rpc("ops").requestRelease({ name: "billing/h", reason: "maintenance" })).to.deep.equal({
        holders: 1,
      });
      expect((await holder.next("releaseRequested")).releaseRequested).to.include({
        requester: "operator ops",
        reason: "maintenance",
      });
    });
  });

  describe("reloading the policy", () => {
    it("applies a new policy on reload (SIGHUP), and keeps the last good one when the new file is bad", async () => {
      const s = await session("auditor");
      s.send(acquireMsg("r1", "billing/p"));
      expect((await s.next("failed")).failed.reason).to.equal(FailureReason.FAILURE_REASON_PERMISSION_DENIED);

      const widened = { rules: [...POLICY.rules, { identities: ["auditor"], rights: ["lock"], names: ["billing/p"] }] };
      writeFileSync(coord.policyFile, JSON.stringify(widened));
      expect(coord.security.reload()).to.equal(true);
      s.send(acquireMsg("r2", "billing/p"));
      await s.next("acquired");

      writeFileSync(
        coord.policyFile,
        JSON.stringify({ rules: [{ identities: ["auditor"], rights: ["lock"], prefixes: ["billing"] }] }),
      );
      expect(coord.security.reload()).to.equal(false);
      s.send(acquireMsg("r3", "billing/p", { owner: "second" }));
      await s.next("queued");
    });

    it("applies a policy file that changed on disk without being told", async () => {
      const auditor = rpc("auditor");
      expect((await failureOf(auditor.describe("any/name"))).code).to.equal(status.PERMISSION_DENIED);
      writeFileSync(
        coord.policyFile,
        JSON.stringify({ rules: [{ identities: ["*"], rights: ["read"], prefixes: [""] }] }),
      );
      // Each attempt waits for the server's answer; the file watcher settles changes for 100 ms.
      const deadline = Date.now() + 10_000;
      while (
        (await rpc("auditor")
          .describe("any/name")
          .catch((e) => e)) instanceof Error
      ) {
        if (Date.now() > deadline) throw new Error("the changed policy was not applied within 10 s");
      }
    });
  });
});
