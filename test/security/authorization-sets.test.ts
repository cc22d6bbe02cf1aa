import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { FailureReason } from "../../gen/ts/turnstile/v1/turnstile.js";
import { RawSession } from "../harness/raw-session.js";
import { acquireAllMsg } from "../harness/requests.js";
import { type SecureCoordinator, startSecureCoordinator } from "../harness/secure-coordinator.js";
import { clientCredentials } from "../harness/test-pki.js";

const TOKEN = randomBytes(32).toString("base64url");
const POLICY = { rules: [{ identities: ["billing-svc"], rights: ["lock", "read"], prefixes: ["billing/"] }] };

describe("authorization of AcquireAll (every name of the set needs a lock grant)", () => {
  let coord: SecureCoordinator;
  let session: RawSession | undefined;

  before(async () => {
    coord = await startSecureCoordinator({ mtls: false, tokens: { "billing-svc": TOKEN }, policy: POLICY });
  });
  after(async () => {
    session?.close();
    await coord.stop();
  });

  it("fails a set with one name outside the grant with PERMISSION_DENIED naming it, storing nothing", async () => {
    session = new RawSession(coord.address, clientCredentials(coord.pki.ca, undefined, TOKEN));
    await session.open(60_000);
    session.send(acquireAllMsg("mixed", ["billing/a", "payroll/b"]));
    const { failed } = await session.next("failed");
    expect(failed.reason).to.equal(FailureReason.FAILURE_REASON_PERMISSION_DENIED);
    expect(failed.message).to.include('"payroll/b"').and.to.include('"billing-svc"');
    // Nothing was taken: the same session gets billing/a alone at once.
    session.send(acquireAllMsg("alone", ["billing/a"], 0));
    expect((await session.next("acquiredAll")).acquiredAll.locks.map((l) => l.name)).to.deep.equal(["billing/a"]);
  });
});
