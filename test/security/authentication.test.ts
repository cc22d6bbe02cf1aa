import { randomBytes } from "node:crypto";
import { type ChannelCredentials, credentials, Metadata, status } from "@grpc/grpc-js";
import { expect } from "chai";
import { type DescribeRequest, type DescribeResponse, LockServiceClient } from "../../gen/ts/turnstile/v1/turnstile.js";
import { RawSession } from "../harness/raw-session.js";
import { RawWatch } from "../harness/raw-watch.js";
import { acquireMsg } from "../harness/requests.js";
import { type SecureCoordinator, startSecureCoordinator } from "../harness/secure-coordinator.js";
import { clientCredentials } from "../harness/test-pki.js";
import { failureOf, unary } from "../harness/unary.js";

const TOKEN = randomBytes(32).toString("base64url");
const POLICY = { rules: [{ identities: ["ops"], rights: ["lock", "read", "admin"], prefixes: [""] }] };

/** TLS credentials whose every call carries exactly this authorization header. */
function withHeader(ca: string, header: string): ChannelCredentials {
  const tls = clientCredentials(ca);
  const meta = credentials.createFromMetadataGenerator((_p, callback) => {
    const m = new Metadata();
    m.set("authorization", header);
    callback(null, m);
  });
  return credentials.combineChannelCredentials(tls, meta);
}

describe("authentication with bearer tokens (TLS, no client certificates)", () => {
  let coord: SecureCoordinator;

  before(async () => {
    coord = await startSecureCoordinator({ mtls: false, tokens: { ops: TOKEN }, policy: POLICY });
  });
  after(() => coord.stop());

  const cases: [string, () => ChannelCredentials][] = [
    ["no credentials", () => clientCredentials(coord.pki.ca)],
    ["a token not in the file", () => clientCredentials(coord.pki.ca, undefined, `${TOKEN}x`)],
    ["an authorization header that is not Bearer", () => withHeader(coord.pki.ca, `Basic ${TOKEN}`)],
    ["an identity's name in place of its token", () => withHeader(coord.pki.ca, "Bearer ops")],
  ];
  for (const [what, creds] of cases) {
    describe(`with ${what}`, () => {
      it("ends Session with UNAUTHENTICATED before any message, and says nothing of the token", async () => {
        const s = new RawSession(coord.address, creds());
        try {
          s.sendOpen();
          const ended = await s.status();
          expect(ended.code).to.equal(status.UNAUTHENTICATED);
          expect(ended.details).not.to.include(TOKEN);
          expect(s.received).to.deep.equal([]);
        } finally {
          s.close();
        }
      });

      it("ends Watch with UNAUTHENTICATED", async () => {
        const w = new RawWatch(coord.address, "any/lock", creds());
        try {
          expect((await w.status()).code).to.equal(status.UNAUTHENTICATED);
          expect(w.received).to.deep.equal([]);
        } finally {
          w.close();
        }
      });

      it("answers Describe, List and Revoke with UNAUTHENTICATED", async () => {
        const rpc = new LockServiceClient(coord.address, creds());
        try {
          const calls = [
            unary(rpc.describe.bind(rpc), { name: "any/lock" }),
            unary(rpc.list.bind(rpc), { prefix: "", pageSize: 10, pageToken: "" }),
            unary(rpc.revoke.bind(rpc), { name: "any/lock", sessionId: "s", owner: "o" }),
          ];
          for (const call of calls) expect((await failureOf(call)).code).to.equal(status.UNAUTHENTICATED);
        } finally {
          rpc.close();
        }
      });
    });
  }

  it("serves a caller with a valid token as the token's identity", async () => {
    const s = new RawSession(coord.address, clientCredentials(coord.pki.ca, undefined, TOKEN));
    const rpc = new LockServiceClient(coord.address, clientCredentials(coord.pki.ca, undefined, TOKEN));
    try {
      await s.open();
      s.send(acquireMsg("r1", "ops/x"));
      await s.next("acquired");
      const d = await unary<DescribeRequest, DescribeResponse>(rpc.describe.bind(rpc), { name: "ops/x" });
      expect(d.holders.map((h) => h.identity)).to.deep.equal(["ops"]);
    } finally {
      s.close();
      rpc.close();
    }
  });
});
