import { copyFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { type ChannelCredentials, credentials, status } from "@grpc/grpc-js";
import { expect } from "chai";
import { type DescribeResponse, LockServiceClient } from "../../gen/ts/turnstile/v1/turnstile.js";
import { RawSession } from "../harness/raw-session.js";
import { acquireMsg, keepAliveMsg } from "../harness/requests.js";
import { type SecureCoordinator, startSecureCoordinator } from "../harness/secure-coordinator.js";
import { clientCredentials, TestPki } from "../harness/test-pki.js";
import { failureOf, unary } from "../harness/unary.js";

const describeVia = (creds: ChannelCredentials, address: string, name: string) => {
  const rpc = new LockServiceClient(address, creds);
  return unary<{ name: string }, DescribeResponse>(rpc.describe.bind(rpc), { name }).finally(() => rpc.close());
};

describe("TLS and mTLS on the gRPC port", () => {
  let coord: SecureCoordinator;
  const open: RawSession[] = [];
  const session = (creds: ChannelCredentials) => {
    const s = new RawSession(coord.address, creds);
    open.push(s);
    return s;
  };

  beforeEach(async () => {
    coord = await startSecureCoordinator();
  });
  afterEach(async () => {
    for (const s of open.splice(0)) s.close();
    await coord.stop();
  });

  describe("connections it refuses", () => {
    it("refuses a plaintext client (UNAVAILABLE, nothing served)", async () => {
      const err = await failureOf(describeVia(credentials.createInsecure(), coord.address, "a"));
      expect(err.code).to.equal(status.UNAVAILABLE);
    });

    it("is refused by a client that trusts another CA", async () => {
      const other = new TestPki(coord.dir, "other-ca");
      const client = coord.pki.leaf("alice", { cn: "alice" });
      const err = await failureOf(describeVia(clientCredentials(other.ca, client), coord.address, "a"));
      expect(err.code).to.equal(status.UNAVAILABLE);
    });

    it("refuses a client without a certificate when it requires them (mTLS)", async () => {
      const err = await failureOf(describeVia(clientCredentials(coord.pki.ca), coord.address, "a"));
      expect(err.code).to.equal(status.UNAVAILABLE);
    });

    it("refuses an expired client certificate", async () => {
      const expired = coord.pki.leaf("expired", { cn: "alice", days: -1 });
      const err = await failureOf(describeVia(clientCredentials(coord.pki.ca, expired), coord.address, "a"));
      expect(err.code).to.equal(status.UNAVAILABLE);
    });

    it("refuses a client certificate another CA signed", async () => {
      const rogue = new TestPki(coord.dir, "rogue-ca").leaf("mallory", { cn: "alice" });
      const err = await failureOf(describeVia(clientCredentials(coord.pki.ca, rogue), coord.address, "a"));
      expect(err.code).to.equal(status.UNAVAILABLE);
    });
  });

  describe("the caller's identity", () => {
    it("is the certificate's URI SAN, else its DNS SAN, else its CN, as Describe shows for each holder", async () => {
      const certs = [
        coord.pki.leaf("uri", { cn: "cn-1", san: ["DNS:dns-1.corp", "URI:spiffe://corp/billing"] }),
        coord.pki.leaf("dns", { cn: "cn-2", san: ["DNS:dns-2.corp"] }),
        coord.pki.leaf("cn", { cn: "cn-3" }),
      ];
      for (const [i, cert] of certs.entries()) {
        const s = session(clientCredentials(coord.pki.ca, cert));
        await s.open();
        s.send(acquireMsg(`r${i}`, "shared/x", { owner: `o${i}`, mode: 2, limit: 3 }));
        await s.next("acquired");
      }
      const d = await describeVia(clientCredentials(coord.pki.ca, certs[2]), coord.address, "shared/x");
      expect(d.holders.map((h) => [h.owner, h.identity])).to.deep.equal([
        ["o0", "spiffe://corp/billing"],
        ["o1", "dns-2.corp"],
        ["o2", "cn-3"],
      ]);
    });
  });

  describe("certificate rotation", () => {
    it("serves new connections with the new certificate after SIGHUP's reload, and keeps open streams", async () => {
      const alice = coord.pki.leaf("alice", { cn: "alice" });
      const held = session(clientCredentials(coord.pki.ca, alice));
      await held.open(60_000);
      held.send(acquireMsg("r1", "rotate/a"));
      await held.next("acquired");

      // The server's new certificate comes from a new CA: only clients trusting it can connect after.
      const next = new TestPki(coord.dir, "next-ca");
      const fresh = next.server("server-next");
      copyFileSync(fresh.cert, coord.server.cert);
      copyFileSync(fresh.key, coord.server.key);
      expect(coord.security.reload()).to.equal(true);

      const viaNext = await describeVia(clientCredentials(next.ca, alice), coord.address, "rotate/a");
      expect(viaNext.holders.map((h) => h.identity)).to.deep.equal(["alice"]);
      const viaOld = await failureOf(describeVia(clientCredentials(coord.pki.ca, alice), coord.address, "rotate/a"));
      expect(viaOld.code).to.equal(status.UNAVAILABLE);
      // The stream opened before the rotation still carries requests and answers.
      held.send(keepAliveMsg(1));
      await held.next("keepAliveAck");
      held.send(acquireMsg("r2", "rotate/b"));
      await held.next("acquired");
      expect(held.ended).to.equal(undefined);
    });

    it("reloads by itself when the certificate files are replaced", async () => {
      const alice = coord.pki.leaf("alice", { cn: "alice" });
      const next = new TestPki(coord.dir, "next-ca");
      const fresh = next.server("server-next");
      // Replace atomically (write elsewhere, rename over), as deploy tools do; key first, then cert.
      copyFileSync(fresh.key, join(coord.dir, "staged.key"));
      copyFileSync(fresh.cert, join(coord.dir, "staged.crt"));
      renameSync(join(coord.dir, "staged.key"), coord.server.key);
      renameSync(join(coord.dir, "staged.crt"), coord.server.cert);
      const deadline = Date.now() + 10_000;
      for (;;) {
        const answer = await describeVia(clientCredentials(next.ca, alice), coord.address, "x").catch((e) => e);
        if (!(answer instanceof Error)) break;
        if (Date.now() > deadline) throw new Error(`the new certificate was not served within 10 s: ${answer}`);
      }
    });
  });
});
