import { expect } from "chai";
import { AcquireCode, translateAcquire } from "../../../server/store/redis/scripts/acquire.js";
import { AcquireSetCode, translateAcquireSet } from "../../../server/store/redis/scripts/acquire-set.js";
import { CheckCode, translateCheck } from "../../../server/store/redis/scripts/check.js";
import { DescribeCode } from "../../../server/store/redis/scripts/describe.js";
import { ProclaimCode, translateProclaim } from "../../../server/store/redis/scripts/proclaim.js";
import { ReleaseCode, translateRelease } from "../../../server/store/redis/scripts/release.js";
import { ReleaseTokenCode, translateReleaseToken } from "../../../server/store/redis/scripts/release-token.js";
import { RenewCode, translateRenew } from "../../../server/store/redis/scripts/renew.js";
import { RequestReleaseCode, translateRequestRelease } from "../../../server/store/redis/scripts/request-release.js";
import { RevokeCode, translateRevoke } from "../../../server/store/redis/scripts/revoke.js";
import { TransferCode, translateTransfer } from "../../../server/store/redis/scripts/transfer.js";
import {
  acquire,
  check,
  describeLock,
  GRANTS,
  keys,
  proclaim,
  RETAIN_MS,
  release,
  renew,
  requestRelease,
  revoke,
  transfer,
  useScripts,
} from "./script-fixture.js";
import { acquireSet } from "./set-fixture.js";

/** The members of a numeric or string enum (TypeScript adds reverse names to numeric ones). */
function membersOf(codes: Record<string, string | number>): (string | number)[] {
  return Object.entries(codes)
    .filter(([name]) => Number.isNaN(Number(name)))
    .map(([, value]) => value);
}

/**
 * Every return code of every script, each made to happen against Redis and read through the script's
 * own enum and translation (scripts/<verb>.ts): the enum and the Lua contract header cannot drift apart
 * without one of these failing. `seen` collects each script's codes; the last test checks that every
 * member of every enum was seen.
 */
describe("the scripts' return codes, one each, against Redis", () => {
  const f = useScripts();
  const seen = new Map<object, Set<string | number>>();
  const saw = (codes: object, code: unknown) => {
    if (!seen.has(codes)) seen.set(codes, new Set());
    seen.get(codes)?.add(code as string | number);
  };

  it("acquire.lua: Granted, Queued, Busy, Conflict, Upgrade", async () => {
    const granted = await acquire(f, "a", { session: "s1", mode: 2, limit: 2 });
    expect(granted[0]).to.equal(AcquireCode.Granted);
    expect(translateAcquire(granted)).to.include({ kind: "granted", holdCount: 1 });
    const upgrade = await acquire(f, "a", { session: "s1", request: "r2", mode: 1 });
    expect(upgrade[0]).to.equal(AcquireCode.Upgrade);
    const conflict = await acquire(f, "a", { session: "s2", mode: 2, limit: 3 });
    expect(translateAcquire(conflict)).to.deep.equal({ kind: "conflict", limitInForce: 2 });
    const busy = await acquire(f, "a", { session: "s3", mode: 1, mayWait: false });
    expect(translateAcquire(busy)).to.deep.equal({ kind: "busy" });
    const queued = await acquire(f, "a", { session: "s3", mode: 1 });
    expect(translateAcquire(queued)).to.include({ kind: "queued", position: 1 });
    for (const reply of [granted, upgrade, conflict, busy, queued]) saw(AcquireCode, reply[0]);
  });

  it("acquire-set.lua: Granted, Queued, Busy, Conflict, Held", async () => {
    const granted = await acquireSet(f, ["a", "b"], { session: "s1" });
    expect(translateAcquireSet(granted)).to.have.property("kind", "granted");
    const busy = await acquireSet(f, ["c", "b"], { session: "s2", mayWait: false });
    expect(translateAcquireSet(busy)).to.deep.equal({ kind: "busy", index: 1 });
    const queued = await acquireSet(f, ["c", "b"], { session: "s2" });
    expect(translateAcquireSet(queued)).to.include({ kind: "queued", index: 1, position: 1 });
    await acquire(f, "d", { session: "s3", mode: 2, limit: 2 });
    const conflict = await acquireSet(f, ["d"], { session: "s4", modes: [2], limits: [5] });
    expect(translateAcquireSet(conflict)).to.deep.equal({ kind: "conflict", index: 0, limitInForce: 2 });
    const held = await acquireSet(f, ["e", "a"], { session: "s1", request: "other" });
    expect(translateAcquireSet(held)).to.deep.equal({ kind: "held", index: 1 });
    for (const reply of [granted, queued, busy, conflict, held]) saw(AcquireSetCode, reply[0]);
  });

  it("release.lua: Released, NotHeld, Withdrawn, GrantReleased, Gone", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", request: "r2" });
    await acquire(f, "a", { session: "s3", request: "r3" });
    const withdrawn = await release(f, "a", { session: "s3", request: "r3" });
    expect(translateRelease(withdrawn)).to.deep.equal({ kind: "withdrawn" });
    const released = await release(f, "a", { session: "s1" });
    expect(translateRelease(released)).to.deep.equal({ kind: "released", holdCount: 0 });
    // The release granted s2's waiter r2; its cancel raced that grant and lets it go.
    const grantReleased = await release(f, "a", { session: "s2", request: "r2" });
    expect(translateRelease(grantReleased)).to.deep.equal({ kind: "grant-released" });
    const gone = await release(f, "a", { session: "s2", request: "r2" });
    expect(translateRelease(gone)).to.deep.equal({ kind: "gone" });
    const notHeld = await release(f, "a", { session: "s1" });
    expect(translateRelease(notHeld)).to.deep.equal({ kind: "not-held" });
    for (const reply of [released, notHeld, withdrawn, grantReleased, gone]) saw(ReleaseCode, reply[0]);
  });

  it("release-token.lua: Dropped, NotHeld", async () => {
    const token = String((await acquire(f, "a", { session: "s1" }))[1]);
    const run = (tokenText: string) => {
      const args = ["c1", RETAIN_MS, "a", GRANTS, keys("a").events, "watched", "0 0", "s1", "o", tokenText];
      return f.scripts.run("release-token", keys("a").all, args) as Promise<unknown[]>;
    };
    const notHeld = await run(String(BigInt(token) + 1n));
    expect(translateReleaseToken(notHeld)).to.deep.equal({ code: ReleaseTokenCode.NotHeld, dropped: 0 });
    const dropped = await run(token);
    expect(translateReleaseToken(dropped)).to.deep.equal({ code: ReleaseTokenCode.Dropped, dropped: 1 });
    for (const reply of [dropped, notHeld]) saw(ReleaseTokenCode, reply[0]);
  });

  it("revoke.lua: Revoked, NotHeld, InvalidSession", async () => {
    await acquire(f, "a", { session: "s1" });
    const revoked = await revoke(f, "a", { session: "s1" });
    expect(translateRevoke(revoked)).to.include({ kind: "revoked", holdCount: 1 });
    const notHeld = await revoke(f, "a", { session: "s1" });
    expect(translateRevoke(notHeld)).to.deep.equal({ kind: "not-held" });
    const invalid = await revoke(f, "a", { session: "s:1" });
    expect(invalid[0]).to.equal(RevokeCode.InvalidSession);
    expect(() => translateRevoke(invalid)).to.throw("revoke.lua refused a session id containing ':'");
    for (const reply of [revoked, notHeld, invalid]) saw(RevokeCode, reply[0]);
  });

  it("proclaim.lua: Proclaimed, NotHeld", async () => {
    await acquire(f, "a", { session: "s1" });
    const proclaimed = await proclaim(f, "a", { session: "s1", value: "v" });
    expect(translateProclaim(proclaimed)).to.equal("proclaimed");
    const notHeld = await proclaim(f, "a", { session: "s2", value: "v" });
    expect(translateProclaim(notHeld)).to.equal("not-held");
    for (const reply of [proclaimed, notHeld]) saw(ProclaimCode, reply[0]);
  });

  it("check.lua: NoDeadline, and per waiter Queued, Gone or a token", async () => {
    const idle = await check(f, "a", "c1", [["s2:r", "s2:o"]]);
    expect(idle[0]).to.equal(CheckCode.NoDeadline);
    expect(translateCheck(idle).statuses).to.deep.equal([{ kind: "gone" }]);
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2" });
    const queued = await check(f, "a", "c1", [["s2:r", "s2:o"]]);
    expect(queued[2]).to.deep.equal([CheckCode.Queued]);
    await release(f, "a", { session: "s1" });
    const granted = await check(f, "a", "c1", [["s2:r", "s2:o"]]);
    expect(translateCheck(granted).statuses[0]).to.have.property("kind", "granted");
    saw(CheckCode, idle[0]);
    saw(CheckCode, queued[2][0]);
    saw(CheckCode, idle[2][0]);
  });

  it("renew.lua: per waiter Queued, Granted or Gone (and a hold's Gone)", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", request: "r2" });
    await acquire(f, "a", { session: "s2", request: "r3", owner: "o3" });
    await release(f, "a", { session: "s2", request: "r3" }); // r3 withdrawn: gone
    const before = await renew(
      f,
      "a",
      "s2",
      30_000,
      ["o"],
      [
        ["r2", "o"],
        ["r3", "o3"],
      ],
    );
    expect(before).to.deep.equal([RenewCode.Gone, RenewCode.Queued, RenewCode.Gone]);
    await release(f, "a", { session: "s1" }); // grants r2
    const after = await renew(f, "a", "s2", 30_000, [], [["r2", "o"]]);
    const locks = [{ owners: [], waiters: [{}] }];
    expect(translateRenew(after, locks)).to.deep.equal([{ holds: [], waiters: ["granted"] }]);
    for (const code of [...before, ...after]) saw(RenewCode, code);
  });

  it("describe.lua: NoDelay when no lock-delay is in force", async () => {
    const reply = await describeLock(f, "a");
    expect(reply[4]).to.equal(DescribeCode.NoDelay);
    saw(DescribeCode, reply[4]);
  });

  it("transfer.lua: Transferred, NotHeld, Shared, InSet, NotWaiting", async () => {
    const token = String((await acquire(f, "a", { session: "s1" }))[1]);
    const notWaiting = await transfer(f, "a", { session: "s1", token });
    expect(translateTransfer(notWaiting)).to.deep.equal({ kind: "not-waiting", waiting: [] });
    await acquire(f, "a", { session: "s2", request: "r2" });
    const transferred = await transfer(f, "a", { session: "s1", token, to: "s2" });
    expect(translateTransfer(transferred)).to.deep.equal({
      kind: "transferred",
      token: 2n,
      to: { sessionId: "s2", owner: "o", requestId: "r2" },
    });
    const notHeld = await transfer(f, "a", { session: "s1", token: "2" });
    expect(translateTransfer(notHeld)).to.deep.equal({ kind: "not-held" });
    await acquire(f, "b", { session: "s1", mode: 2, limit: 2 });
    const shared = await transfer(f, "b", { session: "s1", token: "1" });
    expect(translateTransfer(shared)).to.deep.equal({ kind: "shared" });
    await acquireSet(f, ["a", "c"], { session: "s3" });
    const inSet = await transfer(f, "a", { session: "s2", token: "2", to: "s3" });
    expect(translateTransfer(inSet)).to.deep.equal({ kind: "in-set" });
    for (const reply of [transferred, notHeld, shared, inSet, notWaiting]) saw(TransferCode, reply[0]);
  });

  it("request-release.lua: Asked, NoHolder", async () => {
    const noHolder = await requestRelease(f, "a", { requester: "operator", reason: "deploy" });
    expect(translateRequestRelease(noHolder)).to.equal(0);
    await acquire(f, "a", { session: "s1" });
    const asked = await requestRelease(f, "a", { requester: "operator", reason: "deploy" });
    expect(translateRequestRelease(asked)).to.equal(1);
    for (const reply of [asked, noHolder]) saw(RequestReleaseCode, reply[0]);
  });

  it("saw every member of every script's enum", () => {
    const enums = [AcquireCode, AcquireSetCode, ReleaseCode, ReleaseTokenCode, RevokeCode, ProclaimCode];
    for (const codes of [...enums, TransferCode, RequestReleaseCode, CheckCode, RenewCode, DescribeCode]) {
      expect([...(seen.get(codes) ?? [])].sort(), JSON.stringify(codes)).to.have.members(membersOf(codes));
    }
  });
});
