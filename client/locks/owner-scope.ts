import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The unit of work an acquire runs in, for its owner (docs/deadlocks.md, *Owners that follow the
 * work*): a `withLock`/`withLocks` callback runs in the scope of its lock's owner, as does an explicit
 * `client.withOwner` scope, and an acquire made in a scope without an `owner` of its own takes the
 * scope's. So the locks of one unit of work are one (session, owner): re-entry and deadlock
 * detection see them together. Outside any scope (or when disabled) an acquire keeps its own fresh
 * owner. One per client: another client's scope means nothing here.
 */
export class OwnerScope {
  readonly #storage: AsyncLocalStorage<string> | undefined;

  /** `enabled` false: no scope is ever entered, every acquire without an owner gets a fresh one. */
  constructor(enabled: boolean) {
    this.#storage = enabled ? new AsyncLocalStorage<string>() : undefined;
  }

  /** The owner of the scope the caller runs in; undefined outside any. */
  get current(): string | undefined {
    return this.#storage?.getStore();
  }

  /** `options` with the scope's owner when they name none of their own (the same object otherwise). */
  ownerFor<O extends { owner?: string }>(options: O): O {
    // Not an object: left for the options check to name.
    if (typeof options !== "object" || options === null || options.owner !== undefined) return options;
    const owner = this.#storage?.getStore();
    return owner === undefined ? options : { ...options, owner };
  }

  /** Runs `fn` in the scope of `owner` (at once, and in every continuation it starts). */
  run<T>(owner: string, fn: () => T): T {
    return this.#storage === undefined ? fn() : this.#storage.run(owner, fn);
  }
}
