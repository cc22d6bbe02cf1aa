import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { TurnstileClient } from "../../client/index.js";
import { hashToken } from "../../server/security/token-file.js";
import { ConsoleStream } from "../harness/console-stream.js";
import { spawnTurnstile, type TurnstileProcess } from "../harness/run-turnstile.js";
import { type CertFiles, pemOf, TestPki } from "../harness/test-pki.js";
import { waitForOutput } from "../harness/wait-for-output.js";

const TOKENS = { "ops-admin": "console-admin-token-9f2c", auditor: "console-auditor-token-41ab" };
const POLICY = {
  rules: [
    { identities: ["svc"], rights: ["lock"], prefixes: [""] },
    { identities: ["ops-admin"], rights: ["read", "admin"], prefixes: [""] },
    { identities: ["auditor"], rights: ["read"], prefixes: ["billing/"] },
  ],
};

interface Answer {
  status: number;
  body: string;
}

// `turnstile serve` with mTLS on gRPC, a token file and a policy: the web console (--http) serves
// HTTPS with the gRPC port's certificate, names its callers by bearer token and applies the policy.
describe("the web console under the security settings (turnstile serve --http)", () => {
  let dir: string;
  let pki: TestPki;
  let server: CertFiles;
  let serve: TurnstileProcess;
  let log = "";
  let consoleUrl: string;
  let client: TurnstileClient;
  const streams: ConsoleStream[] = [];

  /** One HTTPS request to the console on a new connection, trusting `ca` (the test CA). */
  const call = (path: string, token?: string, body?: object, ca = pki.caPem): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
      // A browser's POST carries its page's origin, here https://127.0.0.1:PORT.
      if (body) Object.assign(headers, { "content-type": "application/json", origin: consoleUrl });
      const req = httpsRequest(`${consoleUrl}${path}`, { method: body ? "POST" : "GET", headers, ca, agent: false });
      req.on("response", (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on("error", reject);
      req.end(body && JSON.stringify(body));
    });
  const open = async (query: string, token: string) => {
    const s = await ConsoleStream.open(`${consoleUrl}/api/stream?${query}`, token, pki.caPem);
    streams.push(s);
    return s;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "turnstile-console-security-"));
    pki = new TestPki(dir);
    server = pki.server();
    const tokens = Object.entries(TOKENS).map(([who, token]) => `${who} ${hashToken(token)}`);
    writeFileSync(join(dir, "tokens"), `${tokens.join("\n")}\n`);
    writeFileSync(join(dir, "policy.json"), JSON.stringify(POLICY));
    const args = [
      ...["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"],
      ...["--tls-cert", server.cert, "--tls-key", server.key, "--tls-client-ca", pki.ca],
      ...["--token-file", join(dir, "tokens"), "--policy", join(dir, "policy.json")],
    ];
    serve = spawnTurnstile(args, { timeoutMs: 120_000 });
    serve.child.stdout?.on("data", (d: Buffer) => {
      log += d.toString();
    });
    // The console's port is bound first (a taken port stops the start before "listening").
    const started = /"httpPort":(\d+),"https":true[\s\S]*"port":(\d+)[^\n]*"msg":"listening"/;
    const [, httpPort, port] = await waitForOutput(serve.child, started, 15_000);
    consoleUrl = `https://127.0.0.1:${httpPort}`;
    const svc = pki.leaf("svc", { cn: "svc" });
    client = new TurnstileClient(`127.0.0.1:${port}`, { tls: { ca: pki.caPem, ...pemOf(svc) }, ttlMs: 30_000 });
  });
  afterEach(() => {
    for (const s of streams.splice(0)) s.close();
  });
  after(async () => {
    await client?.close();
    serve.child.kill("SIGTERM");
    await serve.done;
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves HTTPS with the gRPC port's certificate and refuses plaintext HTTP", async () => {
    const page = await call("/");
    expect(page.status).to.equal(200);
    const plain = await new Promise<string>((resolve) => {
      const req = httpRequest(consoleUrl.replace("https:", "http:"), (res) => resolve(`HTTP ${res.statusCode}`));
      req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      req.end();
    });
    expect(plain).to.be.oneOf(["ECONNRESET", "HPE_INVALID_CONSTANT", "HTTP 400"]);
  });

  it("names a caller by its token in the token file, and answers 401 without one or with another", async () => {
    expect((await call("/api/whoami")).status).to.equal(401);
    const wrong = await call("/api/whoami", `${TOKENS.auditor}x`);
    expect([wrong.status, wrong.body.includes(TOKENS.auditor)]).to.deep.equal([401, false]);
    const who = await call("/api/whoami", TOKENS.auditor);
    expect(JSON.parse(who.body)).to.deep.equal({ identity: "auditor", authRequired: true });
  });

  it("lists only the names the policy lets the caller read, and refuses a lock outside them", async () => {
    const held = [await client.acquire("billing/a"), await client.acquire("ops/b")];
    const names = async (token: string) =>
      (await (await open("prefix=", token)).next("list")).data.locks.map((l: { name: string }) => l.name);
    expect(await names(TOKENS.auditor)).to.deep.equal(["billing/a"]);
    expect(await names(TOKENS["ops-admin"])).to.deep.equal(["billing/a", "ops/b"]);
    const refused = await open("name=ops%2Fb", TOKENS.auditor).catch((e: Error) => e.message);
    expect(refused).to.match(/^HTTP 403: .*auditor may not read/);
    for (const lock of held) await lock.release();
  });

  it("revokes only with an admin grant, and logs the revoke with the caller's identity", async () => {
    const lock = await client.acquire("billing/r");
    const view = await (await open("name=billing%2Fr", TOKENS.auditor)).next("lock", (l) => l.holders.length === 1);
    expect(view.data.mayRevoke).to.equal(false);
    const { sessionId, owner, token } = view.data.holders[0];
    const hold = { name: "billing/r", sessionId, owner };
    const refused = await call("/api/revoke", TOKENS.auditor, hold);
    expect([refused.status, JSON.parse(refused.body).error]).to.deep.equal([
      403,
      "permission denied: auditor has no admin right on this lock",
    ]);
    expect(lock.lost).to.equal(false);
    const done = await call("/api/revoke", TOKENS["ops-admin"], hold);
    expect([done.status, JSON.parse(done.body)]).to.deep.equal([200, { fencingToken: token, holdCount: 1 }]);
    await new Promise<void>((resolve) =>
      lock.lost ? resolve() : lock.signal.addEventListener("abort", () => resolve()),
    );
    // Checked synchronously before listening, so a line already written is not missed.
    const revoked = /.*"msg":"hold revoked".*/;
    const line = log.match(revoked) ?? (await waitForOutput(serve.child, revoked, 5000));
    expect(JSON.parse(line[0])).to.include({ name: "billing/r", by: "ops-admin" });
  });

  it("serves the new certificate after SIGHUP re-reads it, as the gRPC port does", async () => {
    const next = new TestPki(dir, "next-ca");
    const fresh = next.server("server-next");
    copyFileSync(fresh.key, server.key);
    copyFileSync(fresh.cert, server.cert);
    const reloaded = /"msg":"TLS certificates reloaded"/;
    const seen = log.match(reloaded);
    serve.child.kill("SIGHUP");
    // The file watcher may have reloaded already; SIGHUP then logs a second reload.
    await waitForOutput(serve.child, reloaded, 10_000).catch((err) => (seen ? undefined : Promise.reject(err)));
    expect((await call("/", undefined, undefined, next.caPem)).status).to.equal(200);
    const old = await call("/", undefined, undefined, pki.caPem).catch((e: NodeJS.ErrnoException) => e.code);
    expect(old).to.equal("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
  });
});
