import type { Duration } from "../gen/ts/google/protobuf/duration.js";

const NANOS_PER_MS = 1_000_000;
const NANOS_PER_SECOND = 1_000_000_000;

/**
 * Converts a non-negative, finite millisecond count into a protobuf Duration (sub-millisecond
 * parts kept to the nanosecond). Throws a RangeError for negative or non-finite input.
 */
export function durationFromMs(ms: number): Duration {
  if (!Number.isFinite(ms) || ms < 0) {
    throw new RangeError(`duration must be a finite, non-negative number of ms, got ${ms}`);
  }
  let seconds = Math.floor(ms / 1000);
  let nanos = Math.round((ms - seconds * 1000) * NANOS_PER_MS);
  if (nanos >= NANOS_PER_SECOND) {
    seconds += 1;
    nanos -= NANOS_PER_SECOND;
  }
  return { seconds: BigInt(seconds), nanos };
}

/** Converts a protobuf Duration into milliseconds (fractional when it has sub-ms nanos). */
export function msFromDuration(duration: Duration): number {
  return Number(duration.seconds) * 1000 + duration.nanos / NANOS_PER_MS;
}
