import { Writable } from "node:stream";
import { type Logger, pino } from "pino";

/** A pino logger at `level` whose lines are parsed into `lines` as they are written. */
export function captureLog(level: string): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level }, sink), lines };
}
