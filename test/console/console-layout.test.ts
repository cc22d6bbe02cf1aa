import { randomUUID } from "node:crypto";
import { expect } from "chai";
import type { Page } from "playwright-core";
import { TurnstileClient } from "../../client/index.js";
import {
  type ConsoleUnderTest,
  cellLayouts,
  cells,
  startConsoleInChromium,
  untilRead,
} from "../harness/console-page.js";
import type { TestConsole } from "../harness/console-server.js";

const LOCKS = 200;

// The console's layout in Debian's Chromium with real-world ids (UUID owners and sessions) and a
// page of 200 locks: every cell keeps to one line, a cut cell shows its full text on hover, and
// loading the page asks for nothing the server does not have (no favicon 404, no console error).
describe("web console layout in Chromium", function () {
  this.timeout(120_000);
  let web: TestConsole;
  let page: Page;
  let started: ConsoleUnderTest | undefined;
  const problems: string[] = [];
  const clients: TurnstileClient[] = [];

  before(async function () {
    started = await startConsoleInChromium(this, (page) => {
      page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
      page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
      page.on("response", (r) => r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`));
      // Opening a lock aborts the list's stream on purpose; any other failed request is a problem.
      page.on("requestfailed", (r) => {
        const why = r.failure()?.errorText;
        if (why !== "net::ERR_ABORTED") problems.push(`failed: ${r.url()} ${why}`);
      });
    });
    ({ web, page } = started);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await started?.close();
  });

  it("loads without a 404 or console error, its icon served by the console", async () => {
    // The one expected refusal: the page's first whoami, sent before a token was given.
    const probe = `401 ${web.url}/api/whoami`;
    expect(problems.splice(0, 2).sort()).to.deep.equal([
      probe,
      "console: Failed to load resource: the server responded with a status of 401 (Unauthorized)",
    ]);
    const icon = await page.evaluate(async () => {
      const href = document.querySelector<HTMLLinkElement>('link[rel="icon"]')?.href ?? "";
      const res = await fetch(href);
      return { path: new URL(href).pathname, status: res.status, type: res.headers.get("content-type") };
    });
    expect(icon).to.deep.equal({ path: "/favicon.svg", status: 200, type: "image/svg+xml" });
    expect(problems).to.deep.equal([]);
  });

  it("lists 200 locks held by UUID owners, one line per row", async () => {
    const owners = Array.from({ length: 4 }, () => randomUUID());
    await Promise.all(
      owners.map(async (owner, c) => {
        const client = new TurnstileClient(web.coord.address, { ttlMs: 30_000, clientName: `fleet-${c}` });
        clients.push(client);
        for (let i = c; i < LOCKS; i += owners.length) {
          await client.acquire(`jobs/${String(i).padStart(3, "0")}/${randomUUID()}`, { owner });
        }
      }),
    );
    const rows = await untilRead(
      () => cells(page, "locks"),
      (r) => r.length === LOCKS,
      `${LOCKS} locks listed`,
    );
    expect(rows.every((r) => r[1] === "exclusive" && r[2] === "1" && r[3] === "0")).to.equal(true);
    expect(await page.textContent("#list-note")).to.equal(`${LOCKS} active locks you may read`);
    const layouts = await cellLayouts(page, "locks");
    expect(layouts.filter((l) => l.lines > 1)).to.deep.equal([]);
    const cut = layouts.filter((l) => l.cut);
    expect(cut.length, "lock names cut to fit").to.be.at.least(LOCKS);
    expect(cut.filter((l) => l.title !== l.text)).to.deep.equal([]);
  });

  it("shows a UUID holder and waiter on one line each, cut ids whole on hover", async () => {
    const name = (await cells(page, "locks"))[0][0];
    const waiter = new TurnstileClient(web.coord.address, { ttlMs: 30_000, clientName: "waiting-client" });
    clients.push(waiter);
    const waiterOwner = randomUUID();
    void waiter.acquire(name, { owner: waiterOwner }).catch(() => {});
    await page.click(`#locks tbody tr[data-name="${name}"]`);
    await untilRead(
      () => cells(page, "waiters"),
      (r) => r[0]?.[1] === waiterOwner,
      "the UUID waiter",
    );
    const holder = (await web.coord.coordinator.store.describe(name)).holders[0];
    const holders = await cellLayouts(page, "holders");
    const waiters = await cellLayouts(page, "waiters");
    expect([...holders, ...waiters].filter((l) => l.lines > 1)).to.deep.equal([]);
    // Owner and Session are cut with an ellipsis and whole in their title.
    expect([holders[0], holders[2]].map((l) => [l.cut, l.title, l.text])).to.deep.equal([
      [true, holder.owner, holder.owner],
      [true, holder.sessionId, holder.sessionId],
    ]);
    expect(holders[1].text).to.match(/^fleet-\d$/);
    expect([waiters[1].cut, waiters[1].title]).to.deep.equal([true, waiterOwner]);
    expect(waiters[3].text).to.equal("exclusive");
    expect(problems).to.deep.equal([]);
  });
});
