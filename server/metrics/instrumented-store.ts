import type {
  AcquireArgs,
  AcquireOutcome,
  AcquireSetArgs,
  AcquireSetOutcome,
  CheckOutcome,
  Claim,
  LockPage,
  LockState,
  ReleaseOutcome,
  ReleaseRequest,
  RenewArgs,
  RenewResult,
  RevokeOutcome,
  SessionRecord,
  Store,
  StoreListener,
  TransferArgs,
  TransferOutcome,
} from "../store/store.js";
import type { WaitRegistry } from "../store/wait-registry.js";
import type { Metrics } from "./metrics.js";

/** Every `operation` label of the store metrics; docs/operations.md lists the same (a test checks). */
export const STORE_OPERATIONS = [
  "acquire",
  "acquire_set",
  "release",
  "withdraw",
  "check",
  "renew",
  "save_session",
  "load_session",
  "touch_session",
  "delete_session",
  "describe",
  "list",
  "revoke",
  "proclaim",
  "transfer",
  "request_release",
] as const;

/** One `operation` label value. */
export type StoreOperation = (typeof STORE_OPERATIONS)[number];

/**
 * A Store that times every operation of the store it wraps and reports it to `metrics` (one Lua
 * script per operation on Redis, so this is Redis latency plus the client's queueing), counting
 * rejections as errors. Everything else passes straight through.
 */
export class InstrumentedStore implements Store {
  constructor(
    private readonly inner: Store,
    private readonly metrics: Metrics,
  ) {}

  get coordinatorId(): string {
    return this.inner.coordinatorId;
  }

  /** Passed through untimed: only deadlock detection uses it, never the message path. */
  get waits(): WaitRegistry {
    return this.inner.waits;
  }

  start(listener: StoreListener): Promise<void> {
    return this.inner.start(listener);
  }

  acquire(args: AcquireArgs): Promise<AcquireOutcome> {
    return this.timed("acquire", () => this.inner.acquire(args));
  }

  acquireSet(args: AcquireSetArgs): Promise<AcquireSetOutcome> {
    return this.timed("acquire_set", () => this.inner.acquireSet(args));
  }

  release(claim: Omit<Claim, "requestId"> & { token?: bigint }, all: boolean): Promise<ReleaseOutcome> {
    return this.timed("release", () => this.inner.release(claim, all));
  }

  withdraw(claim: Claim, how: "cancel" | "abandon"): Promise<ReleaseOutcome> {
    return this.timed("withdraw", () => this.inner.withdraw(claim, how));
  }

  check(name: string, waiters: Claim[]): Promise<CheckOutcome> {
    return this.timed("check", () => this.inner.check(name, waiters));
  }

  /** Timed as `renew`, the session record's touch included when it rides along (`touchSession`). */
  renew(args: RenewArgs): Promise<RenewResult> {
    return this.timed("renew", () => this.inner.renew(args));
  }

  saveSession(record: SessionRecord): Promise<void> {
    return this.timed("save_session", () => this.inner.saveSession(record));
  }

  loadSession(sessionId: string): Promise<SessionRecord | undefined> {
    return this.timed("load_session", () => this.inner.loadSession(sessionId));
  }

  touchSession(sessionId: string, ttlMs: number): Promise<boolean> {
    return this.timed("touch_session", () => this.inner.touchSession(sessionId, ttlMs));
  }

  deleteSession(sessionId: string): Promise<void> {
    return this.timed("delete_session", () => this.inner.deleteSession(sessionId));
  }

  describe(name: string): Promise<LockState> {
    return this.timed("describe", () => this.inner.describe(name));
  }

  list(prefix: string, pageSize: number, pageToken: string): Promise<LockPage | "invalid-token"> {
    return this.timed("list", () => this.inner.list(prefix, pageSize, pageToken));
  }

  revoke(hold: Omit<Claim, "requestId">): Promise<RevokeOutcome> {
    return this.timed("revoke", () => this.inner.revoke(hold));
  }

  proclaim(hold: Omit<Claim, "requestId">, value: Uint8Array): Promise<"proclaimed" | "not-held"> {
    return this.timed("proclaim", () => this.inner.proclaim(hold, value));
  }

  transfer(args: TransferArgs): Promise<TransferOutcome> {
    return this.timed("transfer", () => this.inner.transfer(args));
  }

  requestRelease(request: ReleaseRequest): Promise<number> {
    return this.timed("request_release", () => this.inner.requestRelease(request));
  }

  watch(name: string): Promise<void> {
    return this.inner.watch(name);
  }

  unwatch(name: string): Promise<void> {
    return this.inner.unwatch(name);
  }

  healthy(): boolean {
    return this.inner.healthy();
  }

  onHealthChange(listener: (healthy: boolean) => void): () => void {
    return this.inner.onHealthChange(listener);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private async timed<T>(operation: StoreOperation, op: () => Promise<T>): Promise<T> {
    const started = performance.now();
    let ok = false;
    try {
      const result = await op();
      ok = true;
      return result;
    } finally {
      this.metrics.storeOperation(operation, performance.now() - started, ok);
    }
  }
}
