import { expect } from "chai";
import { bearerToken, OPEN_ACCESS } from "../../server/console/access/console-access.js";
import { isLoopbackHost } from "../../server/console/access/loopback-host.js";
import { TokenAccess } from "../../server/console/access/token-access.js";

describe("TokenAccess", () => {
  const access = new TokenAccess([
    { identity: "billing-ops", token: "t-billing", grants: [{ prefix: "billing/", rights: ["read", "admin"] }] },
    { identity: "auditor", token: "t-audit", grants: [{ prefix: "", rights: ["read"] }] },
  ]);
  const auth = (value: string) => ({ authorization: value });

  it("identifies a caller by its bearer token and nobody by a missing, unknown or malformed one", () => {
    expect(access.identify(auth("Bearer t-billing"))).to.equal("billing-ops");
    expect(access.identify(auth("Bearer t-audit"))).to.equal("auditor");
    expect(access.identify({})).to.equal(undefined);
    expect(access.identify(auth("Bearer t-billin"))).to.equal(undefined);
    expect(access.identify(auth("Basic dXNlcjpwdw=="))).to.equal(undefined);
    expect(access.identify(auth("Bearer two words"))).to.equal(undefined);
  });

  it("grants a right on names under the prefix only: billing/ does not cover billing-evil/x or billing", () => {
    expect(access.may("billing-ops", "admin", "billing/x")).to.equal(true);
    expect(access.may("billing-ops", "read", "billing-evil/x")).to.equal(false);
    expect(access.may("billing-ops", "read", "billing")).to.equal(false);
    expect(access.may("billing-ops", "read", "ｂilling/x")).to.equal(false); // a full-width look-alike
  });

  it("implies no right from another: read everywhere is no admin anywhere; unknown identities get nothing", () => {
    expect(access.may("auditor", "read", "anything")).to.equal(true);
    expect(access.may("auditor", "admin", "anything")).to.equal(false);
    expect(access.may("someone", "read", "billing/x")).to.equal(false);
  });

  it("keeps security off as open access, and parses only well-formed bearer headers", () => {
    expect([OPEN_ACCESS.required, OPEN_ACCESS.identify({}), OPEN_ACCESS.may("anonymous", "admin", "x")]).to.deep.equal([
      false,
      "anonymous",
      true,
    ]);
    expect(bearerToken(auth("Bearer abc"))).to.equal("abc");
    expect(bearerToken(auth("bearer abc"))).to.equal(undefined);
  });
});

describe("isLoopbackHost()", () => {
  it("accepts localhost, 127.0.0.0/8 and ::1 and nothing else", () => {
    expect(["localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]"].map(isLoopbackHost)).to.deep.equal([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(["0.0.0.0", "10.0.0.1", "localhost.evil.example", "::", "128.0.0.1"].map(isLoopbackHost)).to.deep.equal([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
