/**
 * What a Cluster master's refusal of a write sent straight to it means while slots move: the slot
 * has moved for good (`MOVED`: retry on `address`), is being migrated and this command's keys are
 * all on the importing node (`ASK`: retry there, after `ASKING`), or the command's keys are split
 * between the two nodes mid-migration (`TRYAGAIN`: retry soon). In every case Redis ran nothing.
 */
export type ClusterRedirect = { kind: "moved" | "ask"; address: string } | { kind: "tryagain" };

const REDIRECT = /^(MOVED|ASK) \d+ (\S+)/;

/** The redirect a Redis error reply asks for, or undefined for any other error. */
export function clusterRedirect(err: unknown): ClusterRedirect | undefined {
  if (!(err instanceof Error) || err.name !== "ReplyError") return undefined;
  if (err.message.startsWith("TRYAGAIN")) return { kind: "tryagain" };
  const match = REDIRECT.exec(err.message);
  if (!match) return undefined;
  return { kind: match[1] === "MOVED" ? "moved" : "ask", address: match[2] };
}

/** Pause before the `attempt`th retry after TRYAGAIN (from 0): 5, 10, 20, 40, then 50 ms. */
export function tryAgainDelayMs(attempt: number): number {
  return Math.min(50, 5 * 2 ** attempt);
}
