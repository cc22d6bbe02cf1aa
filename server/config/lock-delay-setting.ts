import { parseDurationText } from "../../wire/duration-text.js";
import { REQUEST_LIMITS } from "../../wire/request-limits.js";

/** Lock-delay in ms by lock-name prefix ("" covers every name); the longest matching prefix applies. */
export type LockDelays = Readonly<Record<string, number>>;

/**
 * Reads `--lock-delay` ("PREFIX=DURATION,...": the text after an item's last "=" is its duration, so
 * "=5s" covers every name). Each problem is one error line naming the setting; a delay above the
 * acquire's bound (60 s) is refused like a bad value, so a coordinator never starts with it.
 */
export function parseLockDelays(text: string | undefined, errors: string[]): LockDelays {
  const delays: Record<string, number> = {};
  if (text === undefined) return delays;
  const max = REQUEST_LIMITS.maxLockDelayMs;
  for (const item of text.split(",")) {
    const at = item.lastIndexOf("=");
    const prefix = item.slice(0, Math.max(0, at)).trim();
    const ms = at < 0 ? undefined : parseDurationText(item.slice(at + 1));
    if (ms === undefined)
      errors.push(`lock-delay: ${JSON.stringify(item.trim())} is not PREFIX=DURATION (e.g. jobs/=5s; =5s: every name)`);
    else if (ms > max)
      errors.push(`lock-delay: ${JSON.stringify(item.trim())} exceeds the maximum lock-delay of ${max} ms (60s)`);
    else delays[prefix] = ms;
  }
  return delays;
}
