import { once } from "node:events";
import { credentials } from "@grpc/grpc-js";
import { expect } from "chai";
import {
  type Blocker,
  Leadership,
  type Lock,
  LockSet,
  LostLockError,
  TurnstileClient,
  TurnstileError,
} from "../../client/index.js";
import { type DescribeResponse, LockServiceClient } from "../../gen/ts/turnstile/v1/turnstile.js";
import { type CoordinatorProcess, spawnCoordinator } from "../harness/coordinator-process.js";
import { TcpProxy } from "../harness/tcp-proxy.js";
import { unary } from "../harness/unary.js";
import { type Expectation, type HandOverExpectation, operationOf, type Scenario, type Step } from "./scenario-files.js";

/** Bounds every wait of a step: long enough for 2 loaded cores, never a speed target. */
const EVENTUALLY_MS = 20_000;

/** What a scenario can hold: a lock, a set, or a leadership. */
type Held = Lock | LockSet | Leadership;

/** How an acquire, acquireAll or campaign ended. */
type Outcome = { granted: Held } | { error: TurnstileError };

interface Started {
  client: string;
  name: string;
  abort: AbortController;
  outcome: Promise<Outcome>;
  settled?: Outcome;
}

interface Observer {
  abort: AbortController;
  leader: string | null | undefined;
  done: Promise<void>;
}

/** The shared parts a driver runs scenarios on: the run's Redis and its "main" coordinator. */
export interface DriverFleet {
  redisUrl: string;
  mainAddress: string;
}

/**
 * Runs one scenario against the TypeScript client (test/conformance/README.md says what each step
 * does). Throws an AssertionError naming the step that did not go as the scenario says.
 */
export async function runScenario(scenario: Scenario, fleet: DriverFleet): Promise<void> {
  const run = new ScenarioRun(fleet);
  try {
    await run.startCoordinators(scenario.coordinators);
    for (const [i, step] of scenario.steps.entries()) {
      try {
        await run.step(step);
      } catch (err) {
        if (err instanceof Error) err.message = `step ${i + 1} ${JSON.stringify(step)}: ${err.message}`;
        throw err;
      }
    }
  } finally {
    await run.cleanUp();
  }
}

class ScenarioRun {
  readonly #fleet: DriverFleet;
  readonly #admin: LockServiceClient;
  readonly #addresses = new Map<string, string>();
  readonly #processes = new Map<string, CoordinatorProcess>();
  readonly #proxies = new Map<string, TcpProxy>();
  readonly #clients = new Map<string, { client: TurnstileClient; resumed: Promise<void> }>();
  readonly #started = new Map<string, Started>();
  readonly #held = new Map<string, { held: Held; client: string }>();
  readonly #observers = new Map<string, Observer>();

  constructor(fleet: DriverFleet) {
    this.#fleet = fleet;
    this.#admin = new LockServiceClient(fleet.mainAddress, credentials.createInsecure());
    this.#addresses.set("main", fleet.mainAddress);
  }

  async startCoordinators(ids: string[]): Promise<void> {
    for (const id of ids) {
      const coordinator = await spawnCoordinator(this.#fleet.redisUrl);
      this.#processes.set(id, coordinator);
      this.#addresses.set(id, coordinator.address);
    }
  }

  async step(step: Step): Promise<void> {
    const op = operationOf(step);
    const id = step[op] as string;
    switch (op) {
      case "open":
        return this.#open(id, (step.via as string[] | undefined) ?? ["main"], step.ttlMs as number | undefined);
      case "proxy":
        this.#proxies.set(id, await TcpProxy.start(this.#address(step.to as string)));
        this.#addresses.set(id, this.#proxies.get(id)?.address ?? "");
        return;
      case "freeze":
        return this.#get(this.#proxies, id, "proxy").freeze();
      case "cut":
        return this.#get(this.#proxies, id, "proxy").stop();
      case "acquire":
      case "acquireAll":
      case "campaign":
        return this.#acquire(op, id, step);
      case "await":
        return this.#check(id, await this.#settle(id), step.expect as Expectation, step);
      case "pending":
        expect(this.#get(this.#started, id, "acquire").settled, `"${id}" is still waiting`).to.equal(undefined);
        return;
      case "cancel":
        return this.#get(this.#started, id, "acquire").abort.abort(
          new TurnstileError("cancelled", `"${id}" cancelled`),
        );
      case "release":
        return this.#release(id);
      case "lost":
        return this.#lost(id, step.reason as string, step.before as string | undefined);
      case "valid": {
        const lock = this.#lock(id);
        expect(lock.lost || lock.signal.aborted, `"${id}" was lost: ${lock.signal.reason}`).to.equal(false);
        expect(lock.leaseRemainingMs, `"${id}" lease left`).to.be.above(0);
        return;
      }
      case "revoke": {
        const lock = this.#lock(id);
        const sessionId = this.#client(this.#get(this.#held, id, "hold").client).sessionId;
        await unary(this.#admin.revoke.bind(this.#admin), { name: lock.name, sessionId, owner: lock.owner });
        return;
      }
      case "describe":
        return this.#describe(id, step);
      case "transfer":
        return this.#transfer(id, step);
      case "askRelease":
        return this.#askRelease(id, step);
      case "releaseRequested":
        return this.#releaseRequested(id, step.from as string, step.reason as string);
      case "proclaim":
        return this.#leadership(id).proclaim(step.value as string);
      case "resign":
        return this.#leadership(id).resign();
      case "observe":
        return this.#observe(id, step.client as string, step.election as string);
      case "leader": {
        const observer = this.#get(this.#observers, id, "observer");
        const want = step.value as string | null;
        await eventually(
          () => observer.leader === want,
          () => `observer "${id}" to see leader ${JSON.stringify(want)} (sees ${JSON.stringify(observer.leader)})`,
        );
        return;
      }
      case "drain": {
        const child = this.#get(this.#processes, id, "coordinator").process;
        const exited = once(child, "exit");
        child.kill("SIGTERM");
        const [code] = await withTimeout(exited, `coordinator "${id}" to exit after SIGTERM`);
        expect(code, `exit code of the drained coordinator "${id}"`).to.equal(0);
        return;
      }
      case "kill":
        return this.#get(this.#processes, id, "coordinator").kill();
      case "resumed":
        return withTimeout(this.#get(this.#clients, id, "client").resumed, `client "${id}" to resume its session`);
      default:
        throw new Error(`unknown operation "${op}"`);
    }
  }

  async cleanUp(): Promise<void> {
    for (const observer of this.#observers.values()) observer.abort.abort();
    await Promise.all([...this.#observers.values()].map((o) => o.done));
    // A frozen link first, so that no close waits on it.
    await Promise.all([...this.#proxies.values()].map((proxy) => proxy.stop()));
    await Promise.all(
      [...this.#clients.values()].map(({ client }) =>
        client.close({ signal: AbortSignal.timeout(10_000) }).catch(() => {}),
      ),
    );
    await Promise.allSettled([...this.#started.values()].map((started) => started.outcome));
    for (const coordinator of this.#processes.values()) await coordinator.kill();
    this.#admin.close();
  }

  async #open(id: string, via: string[], ttlMs: number | undefined): Promise<void> {
    const client = new TurnstileClient(
      via.map((name) => this.#address(name)),
      { clientName: id, ...(ttlMs === undefined ? {} : { ttlMs }) },
    );
    const resumed = new Promise<void>((resolve) => client.once("resumed", () => resolve()));
    this.#clients.set(id, { client, resumed });
    await client.connect({ signal: AbortSignal.timeout(EVENTUALLY_MS) });
  }

  async #acquire(op: string, id: string, step: Step): Promise<void> {
    const client = this.#client(step.client as string);
    const abort = new AbortController();
    const waitMs = step.try === true ? 0 : (step.waitMs as number | undefined);
    const options = {
      signal: abort.signal,
      ...(waitMs === undefined ? {} : { waitMs }),
      ...(step.owner === undefined ? {} : { owner: step.owner as string }),
      ...(step.lockDelayMs === undefined ? {} : { lockDelayMs: step.lockDelayMs as number }),
      ...(step.priority === undefined ? {} : { priority: step.priority as number }),
      ...(step.valueBytes === undefined ? {} : { value: Buffer.alloc(step.valueBytes as number) }),
      ...(step.askToYield === undefined ? {} : { askToYield: step.askToYield as string }),
    };
    let call: Promise<Held | null>;
    let name: string;
    if (op === "acquireAll") {
      const names = step.names as string[];
      name = names[0];
      call = client.acquireAll(names, options);
    } else if (op === "campaign") {
      name = step.election as string;
      call = client.election(name).campaign(step.value as string, options);
    } else {
      name = step.name as string;
      call = acquireOne(client, name, step, options);
    }
    const started: Started = {
      client: step.client as string,
      name,
      abort,
      outcome: call.then(
        (held): Outcome =>
          held === null ? { error: new TurnstileError("busy", "try: the lock is taken") } : { granted: held },
        (err: unknown): Outcome => {
          if (err instanceof TurnstileError) return { error: err };
          throw err;
        },
      ),
    };
    started.outcome.then(
      (outcome) => {
        started.settled = outcome;
      },
      () => {},
    );
    this.#started.set(id, started);
    const expectation = step.expect as Expectation;
    if (typeof expectation === "object" && "queued" in expectation) {
      const on = expectation.on ?? name;
      let seen: DescribeResponse | undefined;
      await eventually(
        async () => {
          if (started.settled) throw new Error(`"${id}" did not queue: ${describeOutcome(started.settled)}`);
          seen = await this.#describeOnce(on);
          return seen.waiters.length === expectation.queued;
        },
        () => `"${id}" to queue at position ${expectation.queued} on "${on}" (waiters: ${seen?.waiters.length})`,
      );
      return;
    }
    this.#check(id, await this.#settle(id), expectation, step);
  }

  async #settle(id: string): Promise<Outcome> {
    return withTimeout(this.#get(this.#started, id, "acquire").outcome, `"${id}" to be answered`);
  }

  #check(id: string, outcome: Outcome, expectation: Expectation, step: Step): void {
    if (expectation === "granted") {
      if (!("granted" in outcome)) throw new Error(`"${id}" was not granted: ${describeOutcome(outcome)}`);
      this.#held.set(id, { held: outcome.granted, client: this.#get(this.#started, id, "acquire").client });
      const held = outcome.granted;
      if (typeof step.tokenAbove === "string") {
        const [mine, theirs] = this.#tokens(held, step.tokenAbove);
        expect(mine > theirs, `"${id}" token ${mine} above "${step.tokenAbove}" token ${theirs}`).to.equal(true);
      }
      if (typeof step.tokenEquals === "string") {
        const [mine, theirs] = this.#tokens(held, step.tokenEquals);
        expect(mine, `"${id}" token equals "${step.tokenEquals}"`).to.equal(theirs);
      }
      if (typeof step.holdCount === "number")
        expect((held as Lock).holdCount, `"${id}" hold count`).to.equal(step.holdCount);
      if (typeof step.locks === "number") expect((held as LockSet).locks.length, `"${id}" locks`).to.equal(step.locks);
      return;
    }
    if (!("error" in expectation)) throw new Error(`"${id}": "queued" is checked when the acquire starts`);
    if (!("error" in outcome)) throw new Error(`"${id}" was granted; expected ${expectation.error}`);
    const error = outcome.error;
    expect(error.reason, `"${id}" failed: ${error.message}`).to.equal(expectation.error);
    if (expectation.messageIncludes !== undefined) expect(error.message).to.include(expectation.messageIncludes);
    if (expectation.blockedBy !== undefined) {
      expect(
        error.blockedBy.map((b) => this.#blockerKey(b)),
        "blockedBy",
      ).to.have.deep.members(
        expectation.blockedBy.map((want) => {
          const lock = want.lock === undefined ? undefined : this.#lockIn(want.lock, want.name);
          return { client: want.client, name: want.name ?? "", token: lock?.fencingToken, owner: lock?.owner };
        }),
      );
    }
    if (expectation.cycle !== undefined) {
      expect(
        error.deadlockCycle.map((s) => s.clientName),
        "deadlock cycle (client names)",
      ).to.deep.equal(expectation.cycle);
    }
  }

  #blockerKey(b: Blocker): { client: string; name: string; token: bigint; owner: string } {
    return { client: b.clientName, name: b.name, token: b.fencingToken, owner: b.owner };
  }

  /** The token of `held` and of the lock `ref`, both on ref's name. */
  #tokens(held: Held, ref: string): [bigint, bigint] {
    const theirs = this.#lockIn(ref);
    const mine = held instanceof LockSet ? held.lock(theirs.name) : held instanceof Leadership ? held.lock : held;
    return [mine.fencingToken, theirs.fencingToken];
  }

  /** The lock held as `id` (for a set, its lock of `name`; else the set's first lock). */
  #lockIn(id: string, name?: string): Lock {
    const held = this.#get(this.#held, id, "hold").held;
    if (held instanceof LockSet) return name === undefined ? held.locks[0] : held.lock(name);
    return held instanceof Leadership ? held.lock : held;
  }

  #lock(id: string): Lock {
    const held = this.#get(this.#held, id, "hold").held;
    if (held instanceof LockSet) throw new Error(`"${id}" is a set`);
    return held instanceof Leadership ? held.lock : held;
  }

  #leadership(id: string): Leadership {
    const held = this.#get(this.#held, id, "hold").held;
    if (!(held instanceof Leadership)) throw new Error(`"${id}" is no leadership`);
    return held;
  }

  async #release(id: string): Promise<void> {
    const { held } = this.#get(this.#held, id, "hold");
    if (held instanceof Leadership) await held.resign();
    else await held.release();
  }

  async #lost(id: string, reason: string, before: string | undefined): Promise<void> {
    const lock = this.#lock(id);
    let settledFirst: Outcome | undefined;
    if (!lock.signal.aborted) {
      const aborted = once(lock.signal, "abort");
      await withTimeout(aborted, `"${id}" to be lost`);
    }
    if (before !== undefined) settledFirst = this.#get(this.#started, before, "acquire").settled;
    const why = lock.signal.reason;
    expect(why, `"${id}" signal reason`).to.be.instanceOf(LostLockError);
    expect((why as LostLockError).lostReason, `"${id}" lost reason`).to.equal(reason);
    if (settledFirst)
      throw new Error(`"${before}" was answered (${describeOutcome(settledFirst)}) before "${id}" was told it is lost`);
  }

  /** Transfers a lock or leadership to client `to`'s session (absent: the head of the queue). */
  async #transfer(id: string, step: Step): Promise<void> {
    const lock = this.#lock(id);
    const to = step.to === undefined ? "" : this.#client(step.to as string).sessionId;
    const outcome = await lock
      .transfer({ sessionId: to, owner: (step.toOwner as string | undefined) ?? "" })
      .then(() => "transferred" as const)
      .catch((err: unknown) => {
        if (err instanceof TurnstileError) return err;
        throw err;
      });
    this.#checkHandOver(id, outcome, step.expect as HandOverExpectation);
    if (outcome === "transferred") expect(lock.leaseRemainingMs, `"${id}" is no longer held`).to.equal(0);
  }

  async #askRelease(clientId: string, step: Step): Promise<void> {
    const outcome = await this.#client(clientId)
      .requestRelease(step.name as string, { reason: (step.reason as string | undefined) ?? "" })
      .catch((err: unknown) => {
        if (err instanceof TurnstileError) return err;
        throw err;
      });
    this.#checkHandOver(clientId, outcome, step.expect as HandOverExpectation);
  }

  #checkHandOver(id: string, outcome: "transferred" | number | TurnstileError, want: HandOverExpectation): void {
    if (typeof want !== "object") {
      if (outcome instanceof TurnstileError) throw new Error(`"${id}" failed: ${outcome.reason}: ${outcome.message}`);
      expect(outcome, `"${id}" answer`).to.equal(want);
      return;
    }
    if (!(outcome instanceof TurnstileError)) throw new Error(`"${id}" answered ${outcome}; expected ${want.error}`);
    expect(outcome.reason, `"${id}" failed: ${outcome.message}`).to.equal(want.error);
    if (want.messageIncludes !== undefined) expect(outcome.message).to.include(want.messageIncludes);
  }

  /** Waits until the holder of `id` is told that client `from` asks it to let go, for `reason`. */
  async #releaseRequested(id: string, from: string, reason: string): Promise<void> {
    const signal = this.#lock(id).releaseRequested;
    if (!signal.aborted) await withTimeout(once(signal, "abort"), `"${id}" to be asked to let go`);
    const request = signal.reason as { reason: string; sessionId?: string };
    expect([request.reason, request.sessionId], `the request to "${id}"`).to.deep.equal([
      reason,
      this.#client(from).sessionId,
    ]);
  }

  async #describe(name: string, step: Step): Promise<void> {
    let seen: DescribeResponse | undefined;
    const priorities = step.priorities as number[] | undefined;
    const matches = (d: DescribeResponse) =>
      (step.holders === undefined || d.holders.length === step.holders) &&
      (step.waiters === undefined || d.waiters.length === step.waiters) &&
      (priorities === undefined || JSON.stringify(d.waiters.map((w) => w.priority)) === JSON.stringify(priorities)) &&
      (step.delay === undefined || (d.delayRemaining !== undefined) === step.delay);
    await eventually(
      async () => {
        seen = await this.#describeOnce(name);
        return matches(seen);
      },
      () =>
        `"${name}" to show ${JSON.stringify(step)} (holders ${seen?.holders.length}, waiters ${seen?.waiters.length}, delay ${seen?.delayRemaining !== undefined})`,
    );
  }

  #describeOnce(name: string): Promise<DescribeResponse> {
    return unary(this.#admin.describe.bind(this.#admin), { name });
  }

  async #observe(id: string, clientId: string, election: string): Promise<void> {
    const abort = new AbortController();
    const observer: Observer = { abort, leader: undefined, done: Promise.resolve() };
    const decoder = new TextDecoder();
    observer.done = (async () => {
      try {
        for await (const leader of this.#client(clientId).election(election).observe({ signal: abort.signal })) {
          observer.leader = leader === null ? null : decoder.decode(leader.value);
        }
      } catch {
        // Aborted at clean-up.
      }
    })();
    this.#observers.set(id, observer);
  }

  #client(id: string): TurnstileClient {
    return this.#get(this.#clients, id, "client").client;
  }

  #address(id: string): string {
    return this.#get(this.#addresses, id, "coordinator or proxy");
  }

  #get<T>(map: Map<string, T>, id: string, what: string): T {
    const found = map.get(id);
    if (found === undefined) throw new Error(`no ${what} "${id}" in this scenario`);
    return found;
  }
}

function acquireOne(
  client: TurnstileClient,
  name: string,
  step: Step,
  options: { waitMs?: number; owner?: string; lockDelayMs?: number; value?: Buffer; signal: AbortSignal },
): Promise<Lock | null> {
  const tryOnce = step.try === true;
  switch (step.kind) {
    case "semaphore": {
      const semaphore = client.semaphore(name, step.limit as number);
      return tryOnce ? semaphore.tryAcquire(options) : semaphore.acquire(options);
    }
    case "read":
    case "write": {
      const rw = client.readWriteLock(name);
      if (step.kind === "read") return tryOnce ? rw.tryRead(options) : rw.read(options);
      return tryOnce ? rw.tryWrite(options) : rw.write(options);
    }
    case undefined:
      return tryOnce ? client.tryAcquire(name, options) : client.acquire(name, options);
    default:
      throw new Error(`unknown kind "${step.kind}"`);
  }
}

function describeOutcome(outcome: Outcome): string {
  return "granted" in outcome ? "granted" : `${outcome.error.reason}: ${outcome.error.message}`;
}

/** Resolves as `promise` does; rejects naming `what` after EVENTUALLY_MS. */
async function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timed out after ${EVENTUALLY_MS} ms waiting for ${what}`)),
      EVENTUALLY_MS,
    );
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Re-checks `done` every 20 ms until it holds; fails with `what()` (read then, so it can show the last state) after EVENTUALLY_MS. */
async function eventually(done: () => boolean | Promise<boolean>, what: () => string): Promise<void> {
  const giveUpAt = Date.now() + EVENTUALLY_MS;
  while (!(await done())) {
    if (Date.now() > giveUpAt) throw new Error(`timed out after ${EVENTUALLY_MS} ms waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
