import { eventChannel, lockKeys } from "./lock-keys.js";

/** The keys of one lock (holders, data, queue, leases, fence, version) and its event channel. */
export interface LockKeySet {
  readonly keys: readonly [string, string, string, string, string, string];
  readonly events: string;
}

/**
 * The keys and event channel of recently used lock names, so that a busy lock's strings are built
 * (escaped, joined) once instead of at every script call. At most `capacity` names are kept; past
 * that the oldest entry goes first.
 */
export class LockKeyCache {
  private readonly sets = new Map<string, LockKeySet>();

  constructor(
    private readonly prefix: string,
    private readonly capacity = 4096,
  ) {}

  /**
   * The keys of `name`, from the cache when there, else built without adding them: a keepalive renews
   * every lock its session holds, mostly idle ones, which would only push the busy locks out (issue 25).
   */
  keysOf(name: string): LockKeySet["keys"] {
    return this.sets.get(name)?.keys ?? lockKeys(this.prefix, name);
  }

  /** The key set of `name`. */
  of(name: string): LockKeySet {
    let set = this.sets.get(name);
    if (set === undefined) {
      if (this.sets.size >= this.capacity) this.sets.delete(this.sets.keys().next().value as string);
      set = { keys: lockKeys(this.prefix, name), events: eventChannel(this.prefix, name) };
      this.sets.set(name, set);
    }
    return set;
  }
}
