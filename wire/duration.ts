import type { Duration } from "../gen/ts/google/protobuf/duration.js";

const NANOS_PER_MS = 1_000_000;
const NANOS_PER_SECOND = 1_000_000_000;
// Past a century the exact number no longer matters: every bound on either side rejects it anyway.
const MAX_WHOLE_SECONDS = 3_153_600_000n;

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

/**
 * Converts a protobuf Duration into whole milliseconds (sub-millisecond nanos dropped), capped at
 * a century. For a Duration already checked to be non-negative and normalised.
 */
export function wholeMsFromDuration(duration: Duration): number {
  const seconds = duration.seconds > MAX_WHOLE_SECONDS ? MAX_WHOLE_SECONDS : duration.seconds;
  return Number(seconds) * 1000 + Math.floor(duration.nanos / NANOS_PER_MS);
}

/** True for a Duration that is negative or not normalised (nanos outside [0, 1e9)). */
export function isNegativeOrMalformed(duration: Duration): boolean {
  return duration.seconds < 0n || duration.nanos < 0 || duration.nanos >= NANOS_PER_SECOND;
}
