/** What a shared enter/exit log showed once it passed every check. */
export interface SharedLogReport {
  /** Completed holds (enter followed by its own exit). */
  holds: number;
  /** Completed holds per language: the part of the worker name before the first '-'. */
  holdsByLanguage: Map<string, number>;
  /** How often consecutive holds went to workers of different languages. */
  languageSwitches: number;
}

const LINE = /^(enter|exit|lost) (\S+) (\d+)$/;

/**
 * Checks a log of "enter <worker> <token>" / "exit <worker> <token>" lines written by contending
 * workers: every enter is followed by its own exit before the next enter (no overlap), tokens
 * strictly increase, no worker logged "lost", and the log ends with nobody inside. Throws an
 * Error naming the first offending line; returns what the log showed otherwise.
 */
export function checkSharedLog(text: string): SharedLogReport {
  const report: SharedLogReport = { holds: 0, holdsByLanguage: new Map(), languageSwitches: 0 };
  let inside: { worker: string; token: bigint; line: number } | undefined;
  let lastToken = -1n;
  let lastLanguage: string | undefined;
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  lines.forEach((line, index) => {
    const at = `line ${index + 1} (${JSON.stringify(line)})`;
    const match = LINE.exec(line);
    if (match === null) throw new Error(`${at}: not "enter|exit|lost <worker> <token>"`);
    const [, event, worker, digits] = match;
    const token = BigInt(digits);
    if (event === "lost") throw new Error(`${at}: ${worker} lost its lock while holding it`);
    if (event === "enter") {
      if (inside !== undefined) {
        throw new Error(`${at}: ${worker} entered while ${inside.worker} (token ${inside.token}) was inside`);
      }
      if (token <= lastToken) throw new Error(`${at}: token ${token} is not greater than ${lastToken}`);
      inside = { worker, token, line: index + 1 };
      lastToken = token;
      return;
    }
    if (inside === undefined || inside.worker !== worker || inside.token !== token) {
      const holder = inside === undefined ? "nobody" : `${inside.worker} (token ${inside.token})`;
      throw new Error(`${at}: exit while ${holder} was inside`);
    }
    inside = undefined;
    const language = worker.split("-")[0];
    report.holds += 1;
    report.holdsByLanguage.set(language, (report.holdsByLanguage.get(language) ?? 0) + 1);
    if (lastLanguage !== undefined && language !== lastLanguage) report.languageSwitches += 1;
    lastLanguage = language;
  });
  if (inside !== undefined) throw new Error(`line ${inside.line}: ${inside.worker} entered and never exited`);
  return report;
}
