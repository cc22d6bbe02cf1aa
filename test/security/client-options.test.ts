import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { TurnstileClient, TurnstileError } from "../../client/index.js";
import { type SecureCoordinator, startSecureCoordinator } from "../harness/secure-coordinator.js";
import { pemOf } from "../harness/test-pki.js";

const TOKEN = randomBytes(32).toString("base64url");
const POLICY = {
  rules: [
    { identities: ["spiffe://corp/billing"], rights: ["lock"], prefixes: ["billing/"] },
    { identities: ["ci"], rights: ["lock"], prefixes: ["ci/"] },
  ],
};

describe("TurnstileClient tls and token options", () => {
  let coord: SecureCoordinator;
  const clients: TurnstileClient[] = [];
  const client = (options: ConstructorParameters<typeof TurnstileClient>[1]) => {
    const c = new TurnstileClient(coord.address, options);
    clients.push(c);
    return c;
  };

  before(async () => {
    coord = await startSecureCoordinator({ tokens: { ci: TOKEN }, policy: POLICY });
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
  });
  after(() => coord.stop());

  it("locks over mTLS with tls: { ca, cert, key }, and rejects a forbidden name with 'permission-denied'", async () => {
    const cert = coord.pki.leaf("billing", { cn: "billing", san: ["URI:spiffe://corp/billing"] });
    const c = client({ tls: { ca: coord.pki.caPem, ...pemOf(cert) } });
    const lock = await c.acquire("billing/a");
    const err = await c.acquire("billing-evil/a").catch((e: unknown) => e);
    expect(err).to.be.instanceOf(TurnstileError).with.property("reason", "permission-denied");
    expect((err as Error).message).to.include('"spiffe://corp/billing"');
    expect(lock.signal.aborted).to.equal(false);
    await lock.release();
  });

  it("sends token as a bearer token (here alongside a client certificate, whose identity it overrides)", async () => {
    const cert = coord.pki.leaf("billing2", { cn: "billing", san: ["URI:spiffe://corp/billing"] });
    const c = client({ tls: { ca: coord.pki.caPem, ...pemOf(cert) }, token: TOKEN });
    await (await c.acquire("ci/job")).release();
    const err = await c.acquire("billing/a").catch((e: unknown) => e);
    expect(err).to.be.instanceOf(TurnstileError).with.property("reason", "permission-denied");
  });

  it("refuses a token without TLS, and a certificate without its key, as 'invalid-argument'", () => {
    expect(() => new TurnstileClient(coord.address, { token: TOKEN }))
      .to.throw(TurnstileError, /needs TLS/)
      .with.property("reason", "invalid-argument");
    expect(() => new TurnstileClient(coord.address, { tls: { ca: coord.pki.caPem, cert: "x" } }))
      .to.throw(TurnstileError, /cert and key go together/)
      .with.property("reason", "invalid-argument");
  });
});
