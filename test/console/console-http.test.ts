import { request } from "node:http";
import { credentials } from "@grpc/grpc-js";
import { expect } from "chai";
import { TurnstileClient } from "../../client/index.js";
import { type DescribeResponse, LockMode, LockServiceClient } from "../../gen/ts/turnstile/v1/turnstile.js";
import type { ConsoleAccess } from "../../server/console/access/console-access.js";
import { TokenAccess } from "../../server/console/access/token-access.js";
import { msFromDuration } from "../../wire/duration.js";
import { CONSOLE_TOKENS, consoleTestAccess, startConsole, type TestConsole } from "../harness/console-server.js";
import { ConsoleStream } from "../harness/console-stream.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Describe over gRPC, as any client sees it. */
function describeRpc(address: string, name: string): Promise<DescribeResponse> {
  const rpc = new LockServiceClient(address, credentials.createInsecure());
  return new Promise<DescribeResponse>((resolve, reject) =>
    rpc.describe({ name }, (err, res) => (err ? reject(err) : resolve(res))),
  ).finally(() => rpc.close());
}

/** One HTTP request to the console, answered in full. */
function call(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? "GET", headers: options.headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const revokeAs = (url: string, token: string, hold: object, headers: Record<string, string> = {}) =>
  call(`${url}/api/revoke`, {
    method: "POST",
    headers: { ...bearer(token), "content-type": "application/json", ...headers },
    body: JSON.stringify(hold),
  });

describe("web console HTTP API", () => {
  let redis: TestRedis;
  let web: TestConsole;
  let client: TurnstileClient;
  const streams: ConsoleStream[] = [];
  const open = async (query: string, token: string) => {
    const s = await ConsoleStream.open(`${web.url}/api/stream?${query}`, token);
    streams.push(s);
    return s;
  };

  before(async () => {
    redis = await startRedis();
    web = await startConsole(redis.url);
    client = new TurnstileClient(web.coord.address, { ttlMs: 30_000, clientName: "console-test" });
  });
  afterEach(() => {
    for (const s of streams.splice(0)) s.close();
  });
  after(async () => {
    await client.close();
    await web.stop();
    await redis.stop();
  });

  it("serves the page and every answer with a strict Content-Security-Policy and no inline script", async () => {
    const page = await call(`${web.url}/`);
    expect(page.status).to.equal(200);
    expect(page.body).to.match(/<script type="module" src="console.js"><\/script>/);
    expect(page.body).not.to.match(/<script>|\son[a-z]+=/);
    for (const path of ["/", "/console.js", "/console.css", "/api/whoami", "/nope"]) {
      const csp = (await call(`${web.url}${path}`)).headers["content-security-policy"];
      expect(csp, path).to.match(/^default-src 'none'; script-src 'self';/);
      expect(csp, path).not.to.match(/unsafe-inline|unsafe-eval/);
    }
  });

  it("answers HEAD like GET without a body, and names GET, HEAD in a 405's Allow", async () => {
    for (const path of ["/", "/console.js", "/favicon.svg"]) {
      const [get, head] = [await call(`${web.url}${path}`), await call(`${web.url}${path}`, { method: "HEAD" })];
      expect([head.status, head.body], path).to.deep.equal([200, ""]);
      for (const header of ["content-type", "content-length", "content-security-policy"])
        expect(head.headers[header], `${path} ${header}`).to.equal(get.headers[header]);
    }
    const who = await call(`${web.url}/api/whoami`, { method: "HEAD", headers: bearer(CONSOLE_TOKENS.reader) });
    expect([who.status, who.headers["content-type"], who.body]).to.deep.equal([
      200,
      "application/json; charset=utf-8",
      "",
    ]);
    const stream = await call(`${web.url}/api/stream`, { method: "HEAD", headers: bearer(CONSOLE_TOKENS.reader) });
    expect([stream.status, stream.headers["content-type"], stream.body]).to.deep.equal([
      200,
      "text/event-stream; charset=utf-8",
      "",
    ]);
    expect((await call(`${web.url}/api/stream`, { method: "HEAD" })).status).to.equal(401);
    const put = await call(`${web.url}/`, { method: "PUT" });
    expect([put.status, put.headers.allow]).to.deep.equal([405, "GET, HEAD"]);
    const getRevoke = await call(`${web.url}/api/revoke`, { method: "HEAD" });
    expect([getRevoke.status, getRevoke.headers.allow]).to.deep.equal([405, "POST"]);
  });

  it("answers 401 without a token or with an unknown one, never echoing the token", async () => {
    const none = await call(`${web.url}/api/stream`);
    expect([none.status, none.headers["www-authenticate"]]).to.deep.equal([401, "Bearer"]);
    const wrong = await call(`${web.url}/api/whoami`, { headers: bearer("guessed-secret") });
    expect(wrong.status).to.equal(401);
    expect(wrong.body).to.include("not valid").and.not.include("guessed-secret");
    const who = await call(`${web.url}/api/whoami`, { headers: bearer(CONSOLE_TOKENS.reader) });
    expect(JSON.parse(who.body)).to.deep.equal({ identity: "viewer", authRequired: true });
  });

  it("lists only the names the caller may read: billing/ does not cover billing-evil/", async () => {
    const held = [];
    for (const name of ["billing/a", "billing-evil/x", "other/b"]) held.push(await client.acquire(name));
    const billing = await open("prefix=", CONSOLE_TOKENS.billing);
    const list = await billing.next("list", (l) => l.locks.length > 0);
    expect(list.data.locks.map((l: { name: string }) => l.name)).to.deep.equal(["billing/a"]);
    const reader = await open("prefix=", CONSOLE_TOKENS.reader);
    const all = await reader.next("list", (l) => l.locks.length === 3);
    expect(all.data.locks.map((l: { name: string }) => l.name)).to.deep.equal([
      "billing-evil/x",
      "billing/a",
      "other/b",
    ]);
    const refused = await open("name=other%2Fb", CONSOLE_TOKENS.billing).then(
      () => "opened",
      (err: Error) => err.message,
    );
    expect(refused).to.match(/^HTTP 403: .*may not read/);
    for (const lock of held) await lock.release();
  });

  it("shows each waiter's wait and the holders it waits behind as Describe's waited and blocked_by", async () => {
    const lock = await client.acquire("console/blockers", { owner: "first" });
    const waiter = new TurnstileClient(web.coord.address, { ttlMs: 30_000, clientName: "console-waiter" });
    const withdraw = new AbortController();
    const waiting = waiter.acquire("console/blockers", { signal: withdraw.signal }).catch((e: Error) => e);
    try {
      const stream = await open("name=console%2Fblockers", CONSOLE_TOKENS.reader);
      const view = (await stream.next("lock", (l) => l.waiters.length === 1)).data;
      const described = await describeRpc(web.coord.address, "console/blockers");
      const [w, d] = [view.waiters[0], described.waiters[0]];
      expect(w).to.include({ position: 1, clientName: "console-waiter", requestId: d.requestId });
      // Both read the store's clock; the console read came first.
      expect(w.waitedMs).to.be.at.most(msFromDuration(d.waited ?? { seconds: 0n, nanos: 0 }));
      const modes: Record<number, string> = { [LockMode.LOCK_MODE_EXCLUSIVE]: "exclusive" };
      expect(w.blockedBy).to.have.length(1);
      expect(w.blockedBy.map(({ heldForMs, ...b }: { heldForMs: number }) => b)).to.deep.equal(
        d.blockedBy.map(({ heldFor, name, ...b }) => ({
          ...b,
          fencingToken: String(b.fencingToken),
          mode: modes[b.mode],
        })),
      );
      expect(w.blockedBy[0]).to.include({ owner: "first", clientName: "console-test" });
      expect(w.blockedBy[0].heldForMs).to.be.a("number").and.at.most(msFromDuration(d.blockedBy[0].heldFor!));
    } finally {
      withdraw.abort();
      await waiting;
      await waiter.close();
      await lock.release();
    }
  });

  it("shows a waiter's priority and a holder's pending release request (docs/elections.md)", async () => {
    const lock = await client.acquire("console/hand-over", { owner: "first" });
    const waiter = new TurnstileClient(web.coord.address, { ttlMs: 30_000, clientName: "console-waiter" });
    const withdraw = new AbortController();
    const waiting = waiter
      .acquire("console/hand-over", { signal: withdraw.signal, priority: 7 })
      .catch((e: Error) => e);
    try {
      const stream = await open("name=console%2Fhand-over", CONSOLE_TOKENS.reader);
      await stream.next("lock", (l) => l.waiters.length === 1);
      expect(await waiter.requestRelease("console/hand-over", { reason: "my turn" })).to.equal(1);
      const view = (await stream.next("lock", (l) => l.holders[0]?.releaseRequest !== undefined)).data;
      expect(view.waiters[0].priority).to.equal(7);
      expect(view.holders[0].releaseRequest).to.deep.equal({
        requester: `session ${waiter.sessionId}`,
        reason: "my turn",
      });
    } finally {
      withdraw.abort();
      await waiting;
      await waiter.close();
      await lock.release();
    }
  });

  it("refuses a revoke by a reader with 403 and leaves the holder as it was", async () => {
    const lock = await client.acquire("console/revoke-refused");
    const stream = await open("name=console%2Frevoke-refused", CONSOLE_TOKENS.reader);
    const view = await stream.next("lock", (l) => l.holders.length === 1);
    expect(view.data.mayRevoke).to.equal(false);
    const holder = view.data.holders[0];
    const hold = { name: "console/revoke-refused", sessionId: holder.sessionId, owner: holder.owner };
    const refused = await revokeAs(web.url, CONSOLE_TOKENS.reader, hold);
    expect(refused.status).to.equal(403);
    expect(JSON.parse(refused.body).error).to.match(/^permission denied: viewer has no admin right/);
    const after = await web.coord.coordinator.store.describe("console/revoke-refused");
    expect(after.holders.map((h) => String(h.token))).to.deep.equal([holder.token]);
    expect(lock.lost).to.equal(false);
    await lock.release();
  });

  it("revokes as admin: the holder loses the lock and the stream shows it gone", async () => {
    const lock = await client.acquire("console/revoked");
    const stream = await open("name=console%2Frevoked", CONSOLE_TOKENS.admin);
    const view = await stream.next("lock", (l) => l.holders.length === 1 && l.mayRevoke);
    const { sessionId, owner, token } = view.data.holders[0];
    const answer = await revokeAs(web.url, CONSOLE_TOKENS.admin, { name: "console/revoked", sessionId, owner });
    expect([answer.status, JSON.parse(answer.body)]).to.deep.equal([200, { fencingToken: token, holdCount: 1 }]);
    await stream.next("change", (c) => c.change === "revoked" && c.token === token);
    await stream.next("lock", (l) => l.holders.length === 0);
    await new Promise<void>((resolve) =>
      lock.lost ? resolve() : lock.signal.addEventListener("abort", () => resolve()),
    );
  });

  it("shows a lock delayed after a revoke with the delay left, in the lock view and the list", async () => {
    await client.acquire("console/delayed", { lockDelayMs: 30_000 });
    const stream = await open("name=console%2Fdelayed", CONSOLE_TOKENS.admin);
    const view = await stream.next("lock", (l) => l.holders.length === 1 && l.mayRevoke);
    const { sessionId, owner } = view.data.holders[0];
    expect(view.data.delayMs).to.equal(undefined);
    await revokeAs(web.url, CONSOLE_TOKENS.admin, { name: "console/delayed", sessionId, owner });
    const delayed = await stream.next("lock", (l) => l.holders.length === 0);
    expect(delayed.data.delayMs).to.be.within(1, 30_000);
    const list = await open("prefix=console%2Fdelayed", CONSOLE_TOKENS.reader);
    const listed = await list.next("list", (l) => l.locks.length === 1);
    expect(listed.data.locks[0]).to.include({ name: "console/delayed", mode: "free", holders: 0 });
    expect(listed.data.locks[0].delayMs).to.be.within(1, 30_000);
  });

  it("sends every holder change of a hot lock but re-reads it at most every 100 ms", async () => {
    const stream = await open("name=console%2Fhot", CONSOLE_TOKENS.reader);
    await stream.next("lock");
    const started = performance.now();
    const seen = stream.events.length;
    for (let i = 0; i < 60; i++) await (await client.acquire("console/hot")).release();
    const events = await stream.count("change", 120, seen);
    const elapsedMs = performance.now() - started;
    const reads = events.filter((e) => e.event === "lock").length;
    // One read per 100 ms after changes, one per 1 s refresh, and the one in flight at the end.
    expect(reads).to.be.at.most(Math.ceil(elapsedMs / 100) + Math.ceil(elapsedMs / 1000) + 2);
  });

  it("ends an open stream once the caller's rights are withdrawn", async () => {
    let rules = consoleTestAccess();
    const swappable: ConsoleAccess = {
      required: true,
      identify: (headers) => rules.identify(headers),
      may: (identity, right, name) => rules.may(identity, right, name),
    };
    const second = await startConsole(redis.url, { access: swappable, limits: { refreshMs: 50 } });
    try {
      const stream = await ConsoleStream.open(
        `${second.url}/api/stream?name=console%2Fwithdrawn`,
        CONSOLE_TOKENS.reader,
      );
      streams.push(stream);
      await stream.next("lock");
      rules = new TokenAccess([]);
      expect((await stream.next("end")).data).to.deep.equal({ reason: "forbidden" });
      expect(second.handler.stats.clients).to.equal(0);
    } finally {
      await second.stop();
    }
  });

  it("refuses names that are not valid UTF-8 with 400, never as the U+FFFD name, which keeps its holder", async () => {
    const held = await client.acquire("console/a\uFFFD");
    try {
      for (const query of ["name=console%2Fa%FF", "name=console%2Fa%FE", "prefix=console%2Fa%ED%A0%80"]) {
        const got = await call(`${web.url}/api/stream?${query}`, { headers: bearer(CONSOLE_TOKENS.admin) });
        expect([got.status, JSON.parse(got.body).error]).to.deep.equal([400, "query: not valid percent-encoded UTF-8"]);
      }
      const [sessionId, owner] = ["0".repeat(32), ""];
      const rawName = Buffer.concat([
        Buffer.from('{"name":"console/a'),
        Buffer.from([0xff]),
        Buffer.from('","sessionId":"0","owner":""}'),
      ]);
      const raw = await call(`${web.url}/api/revoke`, {
        method: "POST",
        headers: { ...bearer(CONSOLE_TOKENS.admin), "content-type": "application/json" },
        body: rawName,
      });
      expect([raw.status, JSON.parse(raw.body).error]).to.deep.equal([400, "revoke: the body is not valid UTF-8"]);
      const lone = await revokeAs(web.url, CONSOLE_TOKENS.admin, { name: "console/a\udcff", sessionId, owner });
      expect([lone.status, JSON.parse(lone.body).error]).to.deep.equal([
        400,
        "revoke.name: not valid UTF-8 (a lone surrogate)",
      ]);
      const state = await web.coord.coordinator.store.describe("console/a\uFFFD");
      expect(state.holders.map((h) => h.token)).to.deep.equal([held.fencingToken]);
    } finally {
      await held.release();
    }
  });

  it("refuses a revoke from another origin, as a non-JSON body, and a Host header that is not loopback", async () => {
    const hold = { name: "console/x", sessionId: "s", owner: "" };
    const foreign = await revokeAs(web.url, CONSOLE_TOKENS.admin, hold, { origin: "http://evil.example" });
    expect([foreign.status, JSON.parse(foreign.body).error]).to.deep.equal([
      403,
      "origin: revoke only from the console's own page",
    ]);
    const form = await revokeAs(web.url, CONSOLE_TOKENS.admin, hold, { "content-type": "text/plain" });
    expect([form.status, JSON.parse(form.body).error]).to.deep.equal([
      400,
      "revoke: send the body as content-type application/json",
    ]);
    const rebound = await call(`${web.url}/api/whoami`, {
      headers: { ...bearer(CONSOLE_TOKENS.admin), host: "evil.example" },
    });
    expect(rebound.status).to.equal(403);
    const bad = await revokeAs(web.url, CONSOLE_TOKENS.admin, { name: "", sessionId: "s", owner: "" });
    expect([bad.status, JSON.parse(bad.body).error]).to.deep.equal([400, "revoke.name: must not be empty"]);
  });
});
