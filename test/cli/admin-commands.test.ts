import { hostname, userInfo } from "node:os";
import { expect } from "chai";
import type { Lock } from "../../client/locks/lock.js";
import { LostLockError } from "../../client/lost-lock-error.js";
import { TurnstileClient } from "../../client/turnstile-client.js";
import { Coordinator } from "../../server/coordinator.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { captureLog } from "../harness/log-capture.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { runTurnstile, spawnTurnstile } from "../harness/run-turnstile.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { waitForOutput } from "../harness/wait-for-output.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

const text = (s: string) => new TextEncoder().encode(s);

describe("turnstile ls / describe / watch / revoke", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  let holder: TurnstileClient;
  let waiter: TurnstileClient;
  let env: Record<string, string>;
  let alpha: Lock;

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url);
    env = { TURNSTILE_SERVER: coord.address };
    holder = new TurnstileClient(coord.address, { clientName: "admin-test-holder" });
    waiter = new TurnstileClient(coord.address, { clientName: "admin-test-waiter" });
    alpha = await holder.acquire("adm/alpha", { value: text("alpha at 10.0.0.1") });
    await holder.acquire("adm/beta");
    await holder.semaphore("other/gamma", 3).acquire();
  });
  after(async () => {
    await Promise.all([holder.close(), waiter.close()]);
    await coord.stop();
    await redis.stop();
  });

  describe("ls", () => {
    it("prints every active lock as a table sorted by name, or only those under PREFIX", async () => {
      const [all, adm] = await Promise.all([runTurnstile(["ls"], { env }), runTurnstile(["ls", "adm/"], { env })]);
      expect([all.code, all.stderr]).to.deep.equal([0, ""]);
      const rows = all.stdout.trimEnd().split("\n");
      expect(rows[0].split(/\s+/)).to.deep.equal(["NAME", "MODE", "LIMIT", "HOLDERS", "WAITERS"]);
      const names = rows.slice(1).map((r) => r.split(/\s+/)[0]);
      expect(names.filter((n) => /^(adm|other)\//.test(n))).to.deep.equal(["adm/alpha", "adm/beta", "other/gamma"]);
      expect(rows.find((r) => r.startsWith("other/gamma"))?.split(/\s+/)).to.deep.equal([
        "other/gamma",
        "shared",
        "3",
        "1",
        "0",
      ]);
      expect(
        adm.stdout
          .trimEnd()
          .split("\n")
          .slice(1)
          .map((r) => r.split(/\s+/)[0]),
      ).to.deep.equal(["adm/alpha", "adm/beta"]);
    });

    it("prints a JSON array with --output json and stops after --limit locks", async () => {
      const [json, limited] = await Promise.all([
        runTurnstile(["ls", "--output", "json", "adm/"], { env }),
        runTurnstile(["ls", "--limit", "1", "--output", "json"], { env }),
      ]);
      expect(json.code).to.equal(0);
      expect(JSON.parse(json.stdout)).to.deep.equal([
        { name: "adm/alpha", mode: "exclusive", limit: 0, holders: 1, waiters: 0 },
        { name: "adm/beta", mode: "exclusive", limit: 0, holders: 1, waiters: 0 },
      ]);
      expect(JSON.parse(limited.stdout)).to.have.length(1);
    });

    it("prints the first --limit locks by name, wherever List's pages (SCAN order on Redis) put them", async () => {
      const names = Array.from({ length: 20 }, (_, i) => `ord/${String(i).padStart(2, "0")}`);
      const locks = await Promise.all(names.map((n) => holder.acquire(n)));
      try {
        const limited = await runTurnstile(["ls", "--limit", "2", "--output", "json", "ord/"], { env });
        expect([limited.code, limited.stderr]).to.deep.equal([0, ""]);
        expect(JSON.parse(limited.stdout).map((l: { name: string }) => l.name)).to.deep.equal(["ord/00", "ord/01"]);
      } finally {
        await Promise.all(locks.map((l) => l.release()));
      }
    });
  });

  describe("describe", () => {
    it("shows the holder as SESSION_ID/OWNER with its fencing token and value, as a table and as JSON", async () => {
      const [table, json] = await Promise.all([
        runTurnstile(["describe", "adm/alpha"], { env }),
        runTurnstile(["describe", "--output", "json", "adm/alpha"], { env }),
      ]);
      expect([table.code, json.code]).to.deep.equal([0, 0]);
      const doc = JSON.parse(json.stdout);
      expect(doc).to.include({ name: "adm/alpha", mode: "exclusive", limit: 0 });
      expect(doc.waiters).to.deep.equal([]);
      expect(doc.holders).to.have.length(1);
      const [h] = doc.holders;
      expect(h).to.include({
        owner: alpha.owner,
        fencingToken: String(alpha.fencingToken),
        holdCount: 1,
        value: "alpha at 10.0.0.1",
        valueBase64: Buffer.from("alpha at 10.0.0.1").toString("base64"),
      });
      expect(h.holder).to.equal(`${h.sessionId}/${alpha.owner}`);
      expect(table.stdout).to.match(/^Lock: adm\/alpha\nMode: exclusive\n/);
      const row = table.stdout.split("\n").find((l) => l.startsWith(h.holder));
      expect(row?.split(/\s+/).slice(1, 4)).to.deep.equal(["admin-test-holder", String(alpha.fencingToken), "1"]);
      expect(row).to.match(/"alpha at 10\.0\.0\.1"$/);
      expect(h).to.include({ clientName: "admin-test-holder" });
      expect(h.heldForMs).to.be.a("number").and.at.least(0);
    });

    it("shows each waiter's client, how long it has waited and the holder it waits behind", async () => {
      const controller = new AbortController();
      const waiting = waiter.acquire("adm/alpha", { signal: controller.signal }).catch((err: Error) => err);
      try {
        await waitForQueue(redis.url, "adm/alpha", 1);
        const [table, json] = await Promise.all([
          runTurnstile(["describe", "adm/alpha"], { env }),
          runTurnstile(["describe", "--output", "json", "adm/alpha"], { env }),
        ]);
        const doc = JSON.parse(json.stdout);
        const [h] = doc.holders;
        expect(doc.waiters).to.have.length(1);
        const [w] = doc.waiters;
        expect(w).to.include({ position: 1, clientName: "admin-test-waiter", mode: "exclusive" });
        expect(w.waitedMs).to.be.a("number").and.at.least(0);
        expect(w.blockedBy).to.have.length(1);
        expect(w.blockedBy[0]).to.include({
          holder: h.holder,
          clientName: "admin-test-holder",
          fencingToken: String(alpha.fencingToken),
        });
        expect(w.blockedBy[0].heldForMs).to.be.at.least(h.heldForMs);
        const row = table.stdout.split("\n").find((l) => l.startsWith("1 "));
        expect(row?.split(/\s+/).slice(0, 4)).to.deep.equal(["1", w.waiter, "admin-test-waiter", "exclusive"]);
        expect(row).to.match(new RegExp(`${h.holder} \\(\\d+ms\\)$`));
        expect(table.stdout).to.match(/POS\s+WAITER\s+CLIENT\s+MODE\s+WAITED\s+LEASE\s+BEHIND/);
      } finally {
        controller.abort();
        await waiting;
      }
    });

    it("shows a lock delayed after a revoke as 'delayed until TIME (in N s)', and its delay in JSON", async () => {
      await holder.acquire("adm/delayed", { lockDelayMs: 30_000 });
      const described = JSON.parse(
        (await runTurnstile(["describe", "--output", "json", "adm/delayed"], { env })).stdout,
      );
      const revoked = await runTurnstile(["revoke", "adm/delayed", described.holders[0].holder], { env });
      expect(revoked.code).to.equal(0);
      const [table, json] = await Promise.all([
        runTurnstile(["describe", "adm/delayed"], { env }),
        runTurnstile(["describe", "--output", "json", "adm/delayed"], { env }),
      ]);
      expect(table.stdout).to.match(/\nDelay: delayed until \d{4}-\d\d-\d\dT[\d:.]+Z \(in (2\d|30) s\)\n/);
      const doc = JSON.parse(json.stdout);
      expect(doc).to.deep.include({ mode: "free", holders: [], waiters: [] });
      expect(doc.delayRemainingMs).to.be.within(1, 30_000);
      expect(Date.parse(doc.delayedUntil)).to.be.above(Date.now());
    });

    it("shows a free lock with no holders or waiters, as mode 'free' in the table and in JSON", async () => {
      const [table, run] = await Promise.all([
        runTurnstile(["describe", "adm/nobody"], { env }),
        runTurnstile(["describe", "--output", "json", "adm/nobody"], { env }),
      ]);
      expect([table.code, run.code]).to.deep.equal([0, 0]);
      expect(table.stdout).to.match(/^Lock: adm\/nobody\nMode: free\n/);
      expect(JSON.parse(run.stdout)).to.deep.include({ mode: "free", holders: [], waiters: [] });
    });
  });

  describe("revoke", () => {
    it("takes the hold away: the holder's lock signal fires with lostReason 'revoked' and the waiter gets the lock", async () => {
      const held = await holder.acquire("adm/revoke");
      const next = waiter.acquire("adm/revoke");
      await waitForQueue(redis.url, "adm/revoke", 1, 10_000);
      const described = await runTurnstile(["describe", "--output", "json", "adm/revoke"], { env });
      const { holder: holderId } = JSON.parse(described.stdout).holders[0];
      const lost = new Promise<unknown>((resolve) =>
        held.signal.addEventListener("abort", () => resolve(held.signal.reason)),
      );

      const run = await runTurnstile(["revoke", "adm/revoke", holderId], { env });
      expect([run.code, run.stderr]).to.deep.equal([0, ""]);
      expect(run.stdout).to.equal(
        `revoked ${holderId} from "adm/revoke" (fencing token ${held.fencingToken}, hold count 1)\n`,
      );
      const reason = await lost;
      expect(reason).to.be.instanceOf(LostLockError);
      expect((reason as LostLockError).lostReason).to.equal("revoked");
      const granted = await next;
      expect(granted.fencingToken > held.fencingToken).to.equal(true);
      await granted.release();
    });

    it("logs the operator who ran it (user@host, unverified) and the peer when security names nobody", async () => {
      const { log, lines } = captureLog("info");
      const own = new Coordinator({ store: new RedisStore({ url: redis.url }), log, listen: "127.0.0.1:0" });
      const address = `127.0.0.1:${await own.start()}`;
      const owner = new TurnstileClient(address);
      try {
        await owner.acquire("adm/revoke-log", { owner: "w" });
        const { sessionId } = (await own.store.describe("adm/revoke-log")).holders[0];
        const run = await runTurnstile(["revoke", "adm/revoke-log", `${sessionId}/w`], {
          env: { TURNSTILE_SERVER: address },
        });
        expect([run.code, run.stderr]).to.deep.equal([0, ""]);
        const line = lines.find((l) => l.msg === "hold revoked");
        expect(line).to.include({
          name: "adm/revoke-log",
          sessionId,
          owner: "w",
          by: `${userInfo().username}@${hostname()}`,
          verified: false,
        });
        expect(line?.peer).to.match(/127\.0\.0\.1:\d+$/);
      } finally {
        await owner.close();
        await own.stop();
      }
    });

    it("exits 69 with the server's NOT_FOUND when HOLDER does not hold the lock", async () => {
      const run = await runTurnstile(["revoke", "adm/alpha", `${"0123abcd".repeat(4)}/nobody`], { env });
      expect(run.code).to.equal(69);
      expect(run.stderr).to.match(
        /^turnstile revoke: cannot revoke (0123abcd){4}\/nobody on "adm\/alpha": revoke failed: NOT_FOUND/,
      );
    });
  });

  describe("watch", () => {
    it("prints the snapshot, then a line per change, until interrupted (table and --output json)", async () => {
      const watched = await holder.acquire("adm/watch", { value: text("w") });
      const human = spawnTurnstile(["watch", "adm/watch"], { env });
      const json = spawnTurnstile(["watch", "--output", "json", "adm/watch"], { env });
      const token = String(watched.fencingToken);
      // Each wait sees only output after it starts: start both before what produces the lines.
      await Promise.all([
        waitForOutput(
          human.child,
          new RegExp(`^\\d+ snapshot waiters=0 holders: [0-9a-f]+/\\S+ token=${token} value="w"\n`),
          10_000,
        ),
        waitForOutput(json.child, /"type":"snapshot".*\n/, 10_000),
      ]);
      const changes = Promise.all([
        waitForOutput(
          human.child,
          new RegExp(`^\\d+ released \\S+ token=${token} value="w" holders_left=0\n`, "m"),
          10_000,
        ),
        waitForOutput(json.child, /"type":"event".*\n/, 10_000),
      ]);
      await watched.release();
      await changes;
      human.child.kill("SIGINT");
      json.child.kill("SIGTERM");
      const [h, j] = await Promise.all([human.done, json.done]);
      expect([h.code, j.code, h.stderr, j.stderr]).to.deep.equal([0, 0, "", ""]);
      const [snapshot, event] = j.stdout
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(snapshot).to.include({ type: "snapshot", name: "adm/watch", noHolder: false, waiterCount: 0 });
      expect(snapshot.holders[0]).to.include({ fencingToken: token, value: "w" });
      expect(event).to.include({ type: "event", change: "released", holdersLeft: 0, noHolder: true });
      expect(BigInt(event.version)).to.equal(BigInt(snapshot.version) + 1n);
    });
  });

  it("exits 2 with one line on stderr for bad arguments, 69 when the coordinator is unreachable", async function () {
    // Eight processes one after another (in parallel they starve a 2-core machine during npm test).
    this.timeout(90_000);
    const cases: [string[], RegExp][] = [
      [["describe"], /^turnstile describe: expected NAME, got 0 argument\(s\) \(see turnstile describe --help\)\n$/],
      [["revoke", "adm/alpha", "no-slash"], /^turnstile revoke: HOLDER must be SESSION_ID\/OWNER .*got "no-slash"/],
      [["ls", "--limit", "0"], /^turnstile ls: --limit must be a whole number of locks, at least 1, got "0"/],
      [["ls", "--output", "yaml"], /^turnstile ls: --output must be table or json, got "yaml"/],
      [["watch", "a", "b"], /^turnstile watch: expected NAME, got 2 argument\(s\)/],
      [
        ["describe", "--server", "no host", "x"],
        /^turnstile describe: --server must be HOST or HOST:PORT .*got "no host"/,
      ],
      [["ls", "--bogus"], /^turnstile ls: Unknown option '--bogus'/],
    ];
    for (const [args, message] of cases) {
      const run = await runTurnstile(args, { env, timeoutMs: 30_000 });
      expect(run.code, args.join(" ")).to.equal(2);
      expect(run.stderr, args.join(" ")).to.match(message);
      expect(run.stderr.trimEnd().split("\n"), args.join(" ")).to.have.length(1);
    }
    const unreachable = await runTurnstile(["describe", "--server", "127.0.0.1:1", "x"], { timeoutMs: 30_000 });
    expect(unreachable.code).to.equal(69);
    expect(unreachable.stderr).to.match(
      /^turnstile describe: cannot describe "x" on 127.0.0.1:1: describe failed: UNAVAILABLE/,
    );
  });

  it("lists every subcommand in turnstile --help, each name apart from its summary, and answers --help on each", async () => {
    const help = await runTurnstile(["--help"]);
    const names = ["serve", "lock", "ls", "describe", "watch", "revoke", "ask-release", "health", "keys"];
    const rows = help.stdout.split("\n").filter((line) => /^ {2}\S/.test(line));
    // Every summary starts in one column: two spaces after the longest name.
    const column = 2 + Math.max(...names.map((n) => n.length)) + 2;
    expect(rows.map((row) => /^ {2}(\S+) {2,}/.exec(row)?.[1])).to.deep.equal(names);
    expect(rows.map((row) => row.search(/(?<=^ {2}\S+ {2,})\S/))).to.deep.equal(names.map(() => column));
    const runs = await Promise.all(["ls", "describe", "watch", "revoke"].map((c) => runTurnstile([c, "--help"])));
    for (const run of runs) {
      expect(run.code).to.equal(0);
      expect(run.stdout)
        .to.match(/^Usage: turnstile \w+ /)
        .and.include("--server HOST[:PORT]");
    }
  });
});
