import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { RawSession } from "../harness/raw-session.js";
import { spawnServe } from "../harness/redis-coordinator.js";
import { acquireMsg } from "../harness/requests.js";
import { runTurnstile, TURNSTILE, type TurnstileProcess } from "../harness/run-turnstile.js";
import { type CertFiles, clientCredentials, TestPki } from "../harness/test-pki.js";
import { waitForOutput } from "../harness/wait-for-output.js";

const POLICY = {
  rules: [
    { identities: ["billing-svc"], rights: ["lock", "read"], prefixes: ["billing/"] },
    { identities: ["ops"], rights: ["read", "admin"], prefixes: [""] },
  ],
};

describe("turnstile serve with mTLS and a policy, and the CLI over mTLS", () => {
  let dir: string;
  let pki: TestPki;
  let address: string;
  let serve: TurnstileProcess;
  let log = "";
  const certs: Record<string, CertFiles> = {};
  /** The first line of the coordinator's log matching `pattern`, once it has been written. */
  const logged = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const match = log.match(pattern);
        if (!match) return;
        clearTimeout(timer);
        serve.child.stdout?.off("data", check);
        resolve(match[0]);
      };
      const timer = setTimeout(() => {
        serve.child.stdout?.off("data", check);
        reject(new Error(`not logged within 5 s: ${pattern}`));
      }, 5000);
      serve.child.stdout?.on("data", check);
      check();
    });
  const as = (who: string) => ({
    TURNSTILE_SERVER: address,
    TURNSTILE_TLS_CA: pki.ca,
    TURNSTILE_TLS_CERT: certs[who].cert,
    TURNSTILE_TLS_KEY: certs[who].key,
  });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "turnstile-serve-tls-"));
    pki = new TestPki(dir);
    const server = pki.server();
    for (const who of ["billing-svc", "ops"]) certs[who] = pki.leaf(who, { cn: who });
    writeFileSync(join(dir, "policy.json"), JSON.stringify(POLICY));
    const tls = ["--tls-cert", server.cert, "--tls-key", server.key, "--tls-client-ca", pki.ca];
    ({ address, serve } = await spawnServe([...tls, "--policy", join(dir, "policy.json")]));
    serve.child.stdout?.on("data", (d: Buffer) => {
      log += d.toString();
    });
  });
  after(async () => {
    serve.child.kill("SIGTERM");
    await serve.done;
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs a command under a lock, and describe inside it shows the holder's identity", async () => {
    const describe = [...TURNSTILE, "describe", "--output", "json", "billing/job"];
    const run = await runTurnstile(["lock", "billing/job", "--", ...describe], { env: as("billing-svc") });
    expect(run.code, run.stderr).to.equal(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.holders.map((h: { identity: string }) => h.identity)).to.deep.equal(["billing-svc"]);
  });

  it("refuses a lock outside the caller's grants (exit 69, PERMISSION_DENIED named), and a caller without a certificate", async () => {
    const denied = await runTurnstile(["lock", "billing-evil/job", "--", "true"], { env: as("billing-svc") });
    expect(denied.code).to.equal(69);
    expect(denied.stderr).to.include('identity "billing-svc" has no lock grant on "billing-evil/job"');
    const plain = await runTurnstile(["ls"], { env: { TURNSTILE_SERVER: address } });
    expect(plain.code).to.equal(69);
  });

  it("answers a non-admin revoke with PERMISSION_DENIED, and logs an admin's revoke with the admin's identity", async () => {
    const holder = new RawSession(address, clientCredentials(pki.ca, certs["billing-svc"]));
    try {
      const { sessionId } = await holder.open(60_000);
      holder.send(acquireMsg("r1", "billing/held", { owner: "w1" }));
      await holder.next("acquired");
      const refused = await runTurnstile(["revoke", "billing/held", `${sessionId}/w1`], { env: as("billing-svc") });
      expect(refused.code).to.equal(69);
      expect(refused.stderr).to.include("PERMISSION_DENIED");
      const done = await runTurnstile(["revoke", "billing/held", `${sessionId}/w1`], { env: as("ops") });
      expect(done.code, done.stderr).to.equal(0);
      await holder.next("lost");
      const line = await logged(/\{[^\n]*"msg":"hold revoked"[^\n]*\}/);
      expect(JSON.parse(line)).to.include({ name: "billing/held", sessionId, owner: "w1", by: "ops" });
      expect(await logged(/\{[^\n]*"msg":"revoke refused: no admin grant"[^\n]*\}/)).to.include('"by":"billing-svc"');
    } finally {
      holder.close();
    }
  });

  it("re-reads its certificates and policy on SIGHUP", async () => {
    const reloaded = Promise.all([
      waitForOutput(serve.child, /TLS certificates reloaded/, 10_000),
      waitForOutput(serve.child, /policy reloaded/, 10_000),
    ]);
    serve.child.kill("SIGHUP");
    await reloaded;
    const ls = await runTurnstile(["ls"], { env: as("ops") });
    expect(ls.code, ls.stderr).to.equal(0);
  });
});

describe("turnstile serve's safe defaults", () => {
  for (const listen of ["0.0.0.0:0", "[::]:0", "10.1.2.3:7420"]) {
    it(`refuses to listen on ${listen} without TLS or --insecure: exit 2, one line saying why (and one JSON fatal line)`, async () => {
      const run = await runTurnstile(["serve", "--listen", listen]);
      expect(run.code).to.equal(2);
      expect(run.stderr.trim().split("\n")).to.have.length(1);
      expect(run.stderr).to.match(
        /^turnstile serve: listen: .* is not a loopback address and there is no TLS: set --tls-cert and --tls-key, or --insecure/,
      );
      const fatal = JSON.parse(run.stdout.trim());
      expect(fatal).to.include({ level: 60, msg: "cannot start: invalid settings", exitCode: 2 });
    });
  }
});
