import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The folder of the shared scenarios every language's driver runs (test/conformance/README.md). */
export const SCENARIO_DIR = fileURLToPath(new URL("./scenarios/", import.meta.url));

/** test/conformance/constants.json: the numbers every client shares. */
export const CONSTANTS_FILE = fileURLToPath(new URL("./constants.json", import.meta.url));

/** What a finished acquire, campaign or acquireAll must have come to. */
export type Expectation =
  | "granted"
  | { queued: number; on?: string }
  | {
      error: string;
      messageIncludes?: string;
      blockedBy?: { client: string; lock?: string; name?: string }[];
      cycle?: string[];
    };

/** What a transfer or an askRelease must have come to: done (a transfer) or a count (askRelease), or an error. */
export type HandOverExpectation = "transferred" | number | { error: string; messageIncludes?: string };

/** One step of a scenario: an object with exactly one operation key (the first key) and its options. */
export type Step = Record<string, unknown>;

/** A scenario file, as read. */
export interface Scenario {
  /** The file name without `.json`. */
  id: string;
  title: string;
  /** Coordinators started for this scenario alone, besides the shared "main". */
  coordinators: string[];
  steps: Step[];
}

/** Every operation and the keys it may carry (besides the operation key itself). */
export const STEP_KEYS: Readonly<Record<string, readonly string[]>> = {
  open: ["via", "ttlMs"],
  proxy: ["to"],
  freeze: [],
  cut: [],
  acquire: [
    "client",
    "name",
    "kind",
    "limit",
    "waitMs",
    "owner",
    "lockDelayMs",
    "priority",
    "valueBytes",
    "try",
    "expect",
    "tokenAbove",
    "tokenEquals",
    "holdCount",
  ],
  acquireAll: ["client", "names", "waitMs", "owner", "try", "expect", "tokenAbove", "locks"],
  campaign: ["client", "election", "value", "priority", "askToYield", "expect", "tokenAbove"],
  await: ["expect", "tokenAbove", "tokenEquals", "holdCount", "locks"],
  pending: [],
  cancel: [],
  release: [],
  lost: ["reason", "before"],
  valid: [],
  revoke: [],
  describe: ["holders", "waiters", "delay", "priorities"],
  transfer: ["to", "toOwner", "expect"],
  askRelease: ["name", "reason", "expect"],
  releaseRequested: ["from", "reason"],
  proclaim: ["value"],
  resign: [],
  observe: ["client", "election"],
  leader: ["value"],
  drain: [],
  kill: [],
  resumed: [],
};

/** Reads every scenario file, sorted by name; throws naming the file and step of a malformed one. */
export function loadScenarios(): Scenario[] {
  return readdirSync(SCENARIO_DIR)
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => {
      const raw = JSON.parse(readFileSync(`${SCENARIO_DIR}${file}`, "utf8")) as Partial<Scenario>;
      const id = file.slice(0, -".json".length);
      if (typeof raw.title !== "string" || !Array.isArray(raw.steps)) {
        throw new Error(`${file}: needs "title" (a string) and "steps" (an array)`);
      }
      for (const [i, step] of raw.steps.entries()) checkStep(step, `${file} step ${i + 1}`);
      return { id, title: raw.title, coordinators: raw.coordinators ?? [], steps: raw.steps };
    });
}

/** The operation of a step: its first key. */
export function operationOf(step: Step): string {
  return Object.keys(step)[0];
}

function checkStep(step: Step, where: string): void {
  const op = operationOf(step);
  const allowed = STEP_KEYS[op];
  if (!allowed) throw new Error(`${where}: unknown operation "${op}"`);
  const extra = Object.keys(step)
    .slice(1)
    .filter((key) => !allowed.includes(key));
  if (extra.length > 0) throw new Error(`${where}: "${op}" takes no ${extra.map((k) => `"${k}"`).join(", ")}`);
}
