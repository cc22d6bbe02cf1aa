import { expect } from "chai";
import { AccessPolicy } from "../../server/security/access-policy.js";
import { SecurityFileError } from "../../server/security/reloadable-file.js";
import { hashToken, TokenFile } from "../../server/security/token-file.js";

const policy = (rules: object[]) => AccessPolicy.parse(JSON.stringify({ rules }), "p.json");

describe("AccessPolicy", () => {
  describe("allows()", () => {
    const p = policy([
      { identities: ["billing-svc"], rights: ["lock", "read"], prefixes: ["billing/"], names: ["shared-cron"] },
      { identities: ["*"], rights: ["read"], prefixes: ["public/"] },
      { identities: ["root"], rights: ["admin"], prefixes: [""] },
    ]);

    it("covers names under a prefix ending in '/', and exact names, and nothing that merely starts alike", () => {
      const allowed = ["billing/x", "billing/", "billing/a/b", "shared-cron"];
      const denied = ["billing-evil/x", "billing", "billingx", "Billing/x", "shared-cron/x", "shared-cronx", ""];
      for (const name of allowed) expect(p.allows("billing-svc", "lock", name), name).to.equal(true);
      for (const name of denied) expect(p.allows("billing-svc", "lock", name), name).to.equal(false);
    });

    it("compares code points without normalization, so look-alike names are other names", () => {
      for (const name of ["b\u0456lling/x", "billing\uff0fx", "billing\u2215x", "bi\u0301lling/x", "\u200bbilling/x"])
        expect(p.allows("billing-svc", "lock", name), JSON.stringify(name)).to.equal(false);
    });

    it("gives '*' rules to every identity, the empty prefix every name, and only the rights listed", () => {
      expect(p.allows("anyone", "read", "public/x")).to.equal(true);
      expect(p.allows("anyone", "lock", "public/x")).to.equal(false);
      expect(p.allows("root", "admin", "b\u0456lling/x")).to.equal(true);
      expect(p.allows("root", "read", "billing/x")).to.equal(false);
      expect(p.allows("billing-svc", "admin", "billing/x")).to.equal(false);
    });

    it("denies everything when there are no rules", () => {
      expect(policy([]).allows("root", "read", "x")).to.equal(false);
    });
  });

  describe("parse()", () => {
    const cases: [string, unknown, RegExp][] = [
      ["text that is not JSON", "{", /not JSON/],
      ["no rules list", {}, /expected \{"rules": \[\.\.\.\]\}/],
      [
        "a prefix without a trailing '/'",
        [{ identities: ["a"], rights: ["lock"], prefixes: ["billing"] }],
        /rules\[0\]\.prefixes: "billing" must end with "\/"/,
      ],
      [
        "an unknown right",
        [{ identities: ["a"], rights: ["write"], prefixes: [""] }],
        /rules\[0\]\.rights: "write" is not one of lock, read, admin/,
      ],
      [
        "no identities",
        [{ identities: [], rights: ["lock"], prefixes: [""] }],
        /rules\[0\]\.identities: must not be empty/,
      ],
      ["an unknown field", [{ identities: ["a"], rights: ["lock"], prefix: [""] }], /unknown field "prefix"/],
      ["neither prefixes nor names", [{ identities: ["a"], rights: ["lock"] }], /needs "prefixes" or "names"/],
    ];
    for (const [what, rules, error] of cases) {
      it(`rejects ${what}, naming the file, rule and field`, () => {
        const text = typeof rules === "string" ? rules : JSON.stringify(Array.isArray(rules) ? { rules } : rules);
        expect(() => AccessPolicy.parse(text, "p.json"))
          .to.throw(SecurityFileError, /policy p\.json/)
          .and.to.match(error);
      });
    }
  });
});

describe("TokenFile", () => {
  describe("identityOf()", () => {
    it("names the identity whose hash matches the token, and nobody for any other token", () => {
      const file = TokenFile.parse(
        `# ops team\nops ${hashToken("t-ops")}\nci sha256:${hashToken("t-ci")}  # CI\n\n`,
        "t",
      );
      expect(file.size).to.equal(2);
      expect([file.identityOf("t-ops"), file.identityOf("t-ci")]).to.deep.equal(["ops", "ci"]);
      for (const other of ["", "t-op", "t-opsx", "ops", hashToken("t-ops")])
        expect(file.identityOf(other)).to.equal(undefined);
    });
  });

  describe("parse()", () => {
    it("rejects a line that is not IDENTITY SHA256-HEX, naming the line and never echoing it", () => {
      expect(() => TokenFile.parse(`ops ${hashToken("x")}\nci plain-secret-token\n`, "t")).to.throw(
        SecurityFileError,
        /^token file t:2: expected "IDENTITY SHA256-HEX"/,
      );
      expect(() => TokenFile.parse("ci plain-secret-token", "t"))
        .to.throw(SecurityFileError)
        .with.property("message")
        .that.does.not.include("plain-secret-token");
    });
  });
});
