import { expect } from "chai";
import type { LockPage } from "../../../server/store/store.js";
import { ask, askShared, SHORT_TTL } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";
import { passTime } from "./wait-for.js";

/** List: pages by prefix, every active lock once, page tokens, glob characters in prefixes. */
export function listConformance(f: ConformanceFixture): void {
  /** Every page of a listing, in order. */
  async function listAll(prefix: string, pageSize: number): Promise<LockPage[]> {
    const pages: LockPage[] = [];
    let token = "";
    do {
      const page = await f.store.list(prefix, pageSize, token);
      if (page === "invalid-token") throw new Error(page);
      expect(page.locks.length).to.be.at.most(pageSize);
      pages.push(page);
      token = page.nextPageToken;
    } while (token !== "");
    return pages;
  }
  const names = (pages: LockPage[]) => pages.flatMap((p) => p.locks.map((l) => l.name)).sort();

  f.it("lists every active lock with the prefix exactly once across pages of at most the page size", async () => {
    const expected = Array.from({ length: 25 }, (_, i) => `jobs/${String(i).padStart(2, "0")}`);
    for (const name of expected) await f.store.acquire(ask(name, "s1"));
    for (const name of ["other/1", "job", "jobs"]) await f.store.acquire(ask(name, "s1"));
    expect(names(await listAll("jobs/", 7))).to.deep.equal(expected);
    expect(names(await listAll("", 1000))).to.have.length(28);
  });

  f.it("summarises each lock: holders' mode, limit in force, holders and live waiters", async () => {
    await f.store.acquire(ask("x/excl", "s1"));
    await f.store.acquire(ask("x/excl", "s2"));
    await f.store.acquire(askShared("x/shared", "s1", 3));
    await f.store.acquire(askShared("x/shared", "s2", 3));
    const locks = (await listAll("x/", 10)).flatMap((p) => p.locks).sort((a, b) => a.name.localeCompare(b.name));
    expect(locks).to.deep.equal([
      { name: "x/excl", mode: "exclusive", limit: undefined, holders: 1, waiters: 1 },
      { name: "x/shared", mode: "shared", limit: 3, holders: 2, waiters: 0 },
    ]);
  });

  f.it("leaves out locks whose every lease has ended", async () => {
    await f.store.acquire(ask("y/gone", "s1", { ttlMs: SHORT_TTL }));
    await f.store.acquire(ask("y/live", "s1"));
    await passTime(f.store, SHORT_TTL);
    expect(names(await listAll("y/", 10))).to.deep.equal(["y/live"]);
  });

  f.it("matches glob characters, braces and percent signs in the prefix literally", async () => {
    const tricky = ["a*b", "a?c", "a[x]", "a\\d", "a{b}", "a%7B", "ab", "a]"];
    for (const name of tricky) await f.store.acquire(ask(name, "s1"));
    expect(names(await listAll("a*", 10))).to.deep.equal(["a*b"]);
    expect(names(await listAll("a?", 10))).to.deep.equal(["a?c"]);
    expect(names(await listAll("a[", 10))).to.deep.equal(["a[x]"]);
    expect(names(await listAll("a\\", 10))).to.deep.equal(["a\\d"]);
    expect(names(await listAll("a{", 10))).to.deep.equal(["a{b}"]);
    expect(names(await listAll("a%", 10))).to.deep.equal(["a%7B"]);
    expect(names(await listAll("a", 3))).to.deep.equal([...tricky].sort());
  });

  f.it("answers invalid-token to a token it did not issue, or issued for another prefix", async () => {
    for (let i = 0; i < 5; i++) await f.store.acquire(ask(`p/${i}`, "s1"));
    const page = await f.store.list("p/", 2, "");
    if (page === "invalid-token") throw new Error("first page refused");
    expect(page.nextPageToken).to.not.equal("");
    expect(await f.store.list("q/", 2, page.nextPageToken)).to.equal("invalid-token");
    expect(await f.store.list("p/", 2, "not a token")).to.equal("invalid-token");
    expect(await f.store.list("p/", 2, Buffer.from("[1,2,3]").toString("base64url"))).to.equal("invalid-token");
  });
}
