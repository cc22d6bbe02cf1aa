import type { LockState } from "../../../server/store/store.js";

/**
 * Ms-valued fields: a lease, lock-delay or re-check left, or a time held or waited. The two stores
 * read the clock a few ms apart within one step (shared-clock.ts), so these legitimately differ by
 * that much; they are compared within TIME_TOLERANCE_MS (the generator's SKEW_MS: anything further
 * apart would also decide differently). -1 ("no holder") is a code, not a time, and is compared exactly.
 */
const TIME_FIELDS = new Set(["leaseMs", "heldMs", "waitedMs", "delayMs", "recheckInMs"]);
export const TIME_TOLERANCE_MS = 250;

/** An answer or state split into what must be equal (`exact`, as JSON) and its times, in order. */
export interface Normalised {
  exact: string;
  timesMs: number[];
}

/**
 * Normalises one store's answers and lock states for comparison with the other store's. It keeps,
 * per lock name, the first non-zero version it saw: versions start at the clock in µs when a lock's
 * counter is created (on each store its own reading), so only the count of changes since then is
 * comparable. Both stores see the same first change, so their first seen versions stand for the same
 * change; from there each holder change is exactly one more on both.
 */
export class AnswerNormaliser {
  private readonly versionBases = new Map<string, bigint>();

  /** A lock state, its version counted from the first this normaliser saw for the name. */
  lockState(state: LockState): Normalised {
    if (state.version === 0n) return this.normalise(state);
    const base = this.versionBases.get(state.name) ?? state.version;
    this.versionBases.set(state.name, base);
    return this.normalise({ ...state, version: state.version - base + 1n });
  }

  /** Any answer (or listener record). */
  normalise(value: unknown): Normalised {
    const timesMs: number[] = [];
    // `holder[key]` is the value before toJSON: a Buffer (the Redis store's values) would arrive as
    // { type, data }, a Uint8Array (the memory store's) as itself; both are bytes.
    const exact = JSON.stringify(value, function (this: Record<string, unknown>, key, v: unknown) {
      const raw = this[key];
      if (raw instanceof Uint8Array) return `bytes:${Buffer.from(raw).toString("hex")}`;
      if (typeof v === "bigint") return `${v}n`;
      if (TIME_FIELDS.has(key) && typeof v === "number" && v >= 0) {
        timesMs.push(v);
        return "~ms";
      }
      return v;
    });
    return { exact: exact ?? "undefined", timesMs };
  }
}

/** Why two normalised values differ, or undefined when they agree. */
export function difference(memory: Normalised, redis: Normalised): string | undefined {
  if (memory.exact !== redis.exact) return "values differ";
  const far = memory.timesMs.findIndex((ms, i) => Math.abs(ms - redis.timesMs[i]) > TIME_TOLERANCE_MS);
  if (far >= 0) return `time #${far + 1} differs by more than ${TIME_TOLERANCE_MS} ms`;
  return undefined;
}
