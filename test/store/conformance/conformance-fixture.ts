import type { Store } from "../../../server/store/store.js";
import { RecordingListener } from "../../harness/recording-listener.js";

/** The options every store under test takes. */
export interface ConformanceStoreOptions {
  fenceRetainMs?: number;
}

/** Makes a new, not yet started store on the backend under test. */
export type MakeStore = (options: ConformanceStoreOptions) => Store;

/** How the suite runs on one backend: its hooks, and what it cannot (yet) do. */
export interface ConformanceSetup {
  /** Once before the suite, e.g. start a redis-server. */
  before?: () => Promise<void>;
  /** Before each test, after the previous test's stores were closed: e.g. flush Redis. */
  beforeEach?: () => Promise<void>;
  after?: () => Promise<void>;
  /** Set when two stores made by `makeStore` never share locks: why the multi-store tests skip. */
  singleStore?: string;
  /** Test title -> the bug (script, input, expected, actual) that makes it skip on this backend. */
  knownBugs?: Record<string, string>;
}

/** A started store and the listener that records its grants. */
export interface OpenedStore {
  store: Store;
  listener: RecordingListener;
}

/**
 * One conformance test's stores: `store` and `listener` are opened with default options before
 * each test, `open` makes more, and every store is closed after the test.
 */
export class ConformanceFixture {
  store!: Store;
  listener!: RecordingListener;
  private opened: Store[] = [];

  constructor(
    private readonly makeStore: MakeStore,
    readonly setup: ConformanceSetup,
  ) {}

  /** A new store on the same backend, started with a fresh recording listener. */
  async open(options: ConformanceStoreOptions = {}): Promise<OpenedStore> {
    const store = this.makeStore(options);
    const listener = new RecordingListener();
    this.opened.push(store);
    await store.start(listener);
    return { store, listener };
  }

  /** Opens the default store of the next test. */
  async openDefault(): Promise<void> {
    ({ store: this.store, listener: this.listener } = await this.open());
  }

  async closeAll(): Promise<void> {
    const opened = this.opened;
    this.opened = [];
    await Promise.all(opened.map((s) => s.close()));
  }

  /** `it`, or `it.skip` with the bug in the title where this backend has a known bug. */
  it(title: string, fn: () => Promise<void>): void {
    const bug = this.setup.knownBugs?.[title];
    if (bug) it.skip(`${bug} — ${title}`, fn);
    else it(title, fn);
  }

  /** `it` for a test that needs two stores sharing locks; skipped, with the reason, if they cannot. */
  itWithTwoStores(title: string, fn: () => Promise<void>): void {
    const reason = this.setup.singleStore;
    if (reason) it.skip(`${title} (skipped: ${reason})`, fn);
    else this.it(title, fn);
  }
}
