import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { Page } from "playwright-core";
import { PNG } from "pngjs";
import { type Lock, TurnstileClient } from "../../client/index.js";
import {
  type ConsoleUnderTest,
  cells,
  signIn,
  startConsoleInChromium,
  untilRead as until,
} from "../harness/console-page.js";
import { CONSOLE_TOKENS, type TestConsole } from "../harness/console-server.js";

const HOSTILE = "<img src=x onerror=alert(1)>";
const seconds = (text: string) => Number.parseFloat(text);

// The console page in Debian's Chromium against a coordinator on a real redis-server, with the
// TokenAccess test rules: "ops-admin" may read and revoke everything, "viewer" may only read.
describe("web console in Chromium", function () {
  this.timeout(120_000);
  let web: TestConsole;
  let page: Page;
  let started: ConsoleUnderTest | undefined;
  let shots: string;
  /** Every dialog the page opened; a confirm is accepted only while `answer` says so. */
  const dialogs: { type: string; message: string }[] = [];
  let answer: "accept" | "dismiss" = "dismiss";
  const clients: TurnstileClient[] = [];
  const client = (name: string) => {
    const c = new TurnstileClient(web.coord.address, { ttlMs: 30_000, clientName: name });
    clients.push(c);
    return c;
  };
  let first: Lock;
  let second: Promise<Lock>;

  before(async function () {
    started = await startConsoleInChromium(this, (page) =>
      page.on("dialog", (d) => {
        dialogs.push({ type: d.type(), message: d.message() });
        void (d.type() === "confirm" && answer === "accept" ? d.accept() : d.dismiss());
      }),
    );
    ({ web, page } = started);
    shots = mkdtempSync(join(tmpdir(), "turnstile-console-shots-"));
  });
  after(async () => {
    for (const c of clients) await c.close();
    await started?.close();
    if (shots) rmSync(shots, { recursive: true, force: true });
  });

  it("shows a lock in the list when a client acquires it", async () => {
    await client("billing").acquire("billing/invoice-7", { owner: "invoicer" });
    const value = Buffer.from("host=10.0.0.7 job=nightly");
    first = await client("worker-a").acquire("orders/42", { owner: "worker-a", value });
    const rows = await until(
      () => cells(page, "locks"),
      (r) => r.some((c) => c[0] === "orders/42"),
      "orders/42 listed",
    );
    expect(rows.find((c) => c[0] === "orders/42")).to.deep.equal(["orders/42", "exclusive", "1", "0"]);
  });

  it("shows the holder's client, fencing token, held-for and lease countdown, and a waiter's age and whom it waits behind", async () => {
    await page.click('#locks tbody tr[data-name="orders/42"]');
    const [holder] = await until(
      () => cells(page, "holders"),
      (r) => r[0]?.[0] === "worker-a",
      "the holder",
    );
    // Owner, Client, Session, Token, Count, Held for, Lease left, Value.
    expect([holder[1], holder[3], holder[7]]).to.deep.equal([
      "worker-a",
      String(first.fencingToken),
      "host=10.0.0.7 job=nightly",
    ]);
    expect(holder[5]).to.match(/^\d+(\.\d)? s$/);
    second = client("worker-b").acquire("orders/42", { owner: "worker-b" });
    const [waiter] = await until(
      () => cells(page, "waiters"),
      (r) => r[0]?.[1] === "worker-b",
      "the waiter",
    );
    expect(waiter[0]).to.equal("1");
    expect(waiter[5]).to.match(/^worker-a @ \S+ \(worker-a, held \d+(\.\d)? s\)$/);
    const withdrawn = new AbortController();
    const third = client("worker-d").acquire("orders/42", { owner: "worker-d", signal: withdrawn.signal });
    third.catch(() => {});
    const queue = await until(
      () => cells(page, "waiters"),
      (r) => r[1]?.[1] === "worker-d",
      "the second waiter",
    );
    expect(queue[1][5]).to.match(/^worker-a @ \S+ \(worker-a, held [\d.]+ s\); 1 ahead in queue$/);
    const aged = await until(
      () => cells(page, "waiters"),
      (r) => seconds(r[0]?.[4] ?? "0") >= 1.5,
      "the waiter to age 1.5 s",
    );
    const lease = await cells(page, "holders");
    expect(seconds(lease[0][6])).to.be.above(20).and.at.most(30);
    expect(seconds(lease[0][5])).to.be.at.least(seconds(holder[5]));
    expect(seconds(aged[0][4])).to.be.at.most(30);
    const file = join(shots, "console.png");
    await page.screenshot({ path: file });
    const png = PNG.sync.read(readFileSync(file));
    expect([png.width, png.height]).to.deep.equal([1280, 600]);
    if (process.env.TURNSTILE_SCREENSHOT_TO) copyFileSync(file, process.env.TURNSTILE_SCREENSHOT_TO);
    withdrawn.abort();
    await until(
      () => cells(page, "waiters"),
      (r) => r.length === 1,
      "the second waiter gone after it withdrew",
    );
  });

  it("shows the holder change after a release", async () => {
    await first.release();
    const lock = await second;
    const [holder] = await until(
      () => cells(page, "holders"),
      (r) => r[0]?.[0] === "worker-b",
      "worker-b holding",
    );
    expect(holder[3]).to.equal(String(lock.fencingToken));
    expect(await cells(page, "waiters")).to.deep.equal([["", "nobody waits", "", "", "", ""]]);
    const log = await page.$$eval("#changes li", (items) => items.map((i) => i.textContent));
    expect(log.join("\n")).to.match(/released: worker-a @ .*, token /);
  });

  it("asks before it revokes, naming the holder and its token; cancelled, nothing happens", async () => {
    const lock = await second;
    const sessionId = (await web.coord.coordinator.store.describe("orders/42")).holders[0].sessionId;
    const before = dialogs.length;
    await page.click("#holders button.revoke");
    await until(
      () => page.textContent("#status"),
      (t) => t === "revoke cancelled",
      "the revoke cancelled",
    );
    expect(dialogs.slice(before)).to.deep.equal([
      {
        type: "confirm",
        message: [
          "Revoke this hold on orders/42?",
          `Holder: worker-b @ ${sessionId} (client worker-b)`,
          `Fencing token: ${lock.fencingToken}`,
          "The holder is told it lost the lock.",
        ].join("\n"),
      },
    ]);
    expect(lock.lost).to.equal(false);
    expect((await web.coord.coordinator.store.describe("orders/42")).holders.map((h) => h.owner)).to.deep.equal([
      "worker-b",
    ]);
  });

  it("revokes a hold as admin once confirmed: the holder is told and the page shows the lock free", async () => {
    const lock = await second;
    answer = "accept";
    await page.click("#holders button.revoke");
    await until(
      () => cells(page, "holders"),
      (r) => r[0]?.[0] === "nobody holds it",
      "the lock free",
    );
    await until(
      async () => lock.lost,
      (lost) => lost,
      "worker-b to learn it lost the lock",
    );
    expect(await page.textContent("#status")).to.match(/^revoked worker-b @ .* \(token \d+\)$/);
    answer = "dismiss";
  });

  it("offers no revoke to a reader, and the server refuses a forged one with 403", async () => {
    const held = await client("worker-c").acquire("orders/42", { owner: "worker-c" });
    await signIn(page, CONSOLE_TOKENS.reader, "viewer");
    await until(
      () => cells(page, "holders"),
      (r) => r[0]?.[0] === "worker-c",
      "worker-c holding",
    );
    expect(await page.locator("#holders button.revoke").count()).to.equal(0);
    const hold = {
      name: "orders/42",
      sessionId: (await web.coord.coordinator.store.describe("orders/42")).holders[0].sessionId,
      owner: "worker-c",
    };
    const [status, body] = await page.evaluate(
      async ({ hold, token }) => {
        const res = await fetch("/api/revoke", {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify(hold),
        });
        return [res.status, await res.json()] as const;
      },
      { hold, token: CONSOLE_TOKENS.reader },
    );
    expect([status, body.error]).to.deep.equal([403, "permission denied: viewer has no admin right on this lock"]);
    expect(held.lost).to.equal(false);
    expect((await web.coord.coordinator.store.describe("orders/42")).holders.map((h) => h.owner)).to.deep.equal([
      "worker-c",
    ]);
    await held.release();
  });

  it("renders a hostile lock name as text: no element, no script", async () => {
    const before = dialogs.length;
    await client("hostile").acquire(HOSTILE);
    const rows = await until(
      () => cells(page, "locks"),
      (r) => r.some((c) => c[0] === HOSTILE),
      "the hostile name listed",
    );
    expect(rows.filter((c) => c[0] === HOSTILE)).to.have.length(1);
    await page.locator("#locks tbody tr", { hasText: "onerror" }).click();
    await until(
      () => page.textContent("#lock-name"),
      (t) => t === HOSTILE,
      "the hostile lock open",
    );
    expect(await page.evaluate(() => document.querySelectorAll("img").length)).to.equal(0);
    expect(dialogs.slice(before)).to.deep.equal([]);
  });

  it("explains a waiting set as describe does: its mode with the set's names, and the rest of the set it waits for", async () => {
    const held = await client("batch-holder").acquire("batch/b", { owner: "holder" });
    const set = client("batch-set").acquireAll(["batch/a", "batch/b"], { owner: "mover" });
    await until(
      () => cells(page, "locks"),
      (r) => r.some((c) => c[0] === "batch/a"),
      "batch/a listed (the set waits on it)",
    );
    await page.click('#locks tbody tr[data-name="batch/a"]');
    const [waiter] = await until(
      () => cells(page, "waiters"),
      (r) => r[0]?.[1] === "mover",
      "the set's waiter on the free name",
    );
    // Position, Owner, Session, Mode, Waited, Waits behind.
    expect(waiter[3]).to.equal("exclusive, set of batch/a batch/b");
    expect(waiter[5]).to.equal("the rest of its set (batch/b)");
    await page.click('#locks tbody tr[data-name="batch/b"]');
    const [behind] = await until(
      () => cells(page, "waiters"),
      (r) => r[0]?.[1] === "mover" && (r[0]?.[5] ?? "").startsWith("holder @"),
      "the set's waiter on the held name",
    );
    expect(behind[3]).to.equal("exclusive, set of batch/a batch/b");
    expect(behind[5]).to.match(/^holder @ \S+ \(batch-holder, held [\d.]+ s\); the rest of its set \(batch\/a\)$/);
    await held.release();
    await (await set).release();
  });
});
