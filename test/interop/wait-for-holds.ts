import { readFileSync } from "node:fs";

/**
 * Resolves once the shared log at `path` records at least `holds` completed holds ("exit" lines),
 * reading it every 20 ms; rejects after `timeoutMs`. The timer is cleared either way.
 */
export function waitForHolds(path: string, holds: number, timeoutMs: number): Promise<void> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      const exits = readFileSync(path, "utf8")
        .split("\n")
        .filter((line) => line.startsWith("exit ")).length;
      if (exits >= holds) {
        clearInterval(timer);
        resolve();
      } else if (Date.now() - started > timeoutMs) {
        clearInterval(timer);
        reject(new Error(`only ${exits} of ${holds} holds logged after ${timeoutMs} ms`));
      }
    }, 20);
  });
}
