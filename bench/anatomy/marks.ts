/** Which process a mark was taken in. */
export type MarkSource = "client" | "coordinator";

/**
 * One point on a request's path, timestamped on the machine's monotonic clock
 * (`process.hrtime.bigint()`, CLOCK_MONOTONIC: the same clock in every process of one machine).
 * `event` is e.g. "sent:release", "read:acquire", "admitted", "store-sent:release", "flush",
 * "written:acquired", "received:acquired", "resolved".
 */
export interface Mark {
  /** Nanoseconds on the monotonic clock (a Number: exact below 104 days of uptime). */
  t: number;
  source: MarkSource;
  event: string;
  sessionId: string;
  requestId: string;
  /** The lock name, where the message carries one. */
  name: string;
}

/** A oneof `kind` of a session message, as ts-proto builds it. */
type Kind = { $case: string } | undefined;

/** The event suffix, request id and lock name of a session message's `kind`. */
export function describeKind(kind: Kind): { kind: string; requestId: string; name: string } {
  if (!kind) return { kind: "none", requestId: "", name: "" };
  const body = (kind as unknown as Record<string, unknown>)[kind.$case] as
    | { requestId?: unknown; name?: unknown }
    | undefined;
  const requestId = typeof body?.requestId === "string" ? body.requestId : "";
  const name = typeof body?.name === "string" ? body.name : "";
  return { kind: kind.$case, requestId, name };
}

/** Marks as JSON lines (one mark a line), for the coordinator's marks file. */
export function formatMarks(marks: readonly Mark[]): string {
  return marks.map((m) => `${JSON.stringify(m)}\n`).join("");
}

/** Parses formatMarks output; throws naming the line of a mark that is not well formed. */
export function parseMarks(text: string): Mark[] {
  const out: Mark[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "") continue;
    let m: Partial<Mark>;
    try {
      m = JSON.parse(line) as Partial<Mark>;
    } catch {
      throw new Error(`marks line ${i + 1}: not JSON`);
    }
    const ok =
      typeof m.t === "number" &&
      (m.source === "client" || m.source === "coordinator") &&
      typeof m.event === "string" &&
      typeof m.sessionId === "string" &&
      typeof m.requestId === "string" &&
      typeof m.name === "string";
    if (!ok) throw new Error(`marks line ${i + 1}: expected t, source, event, sessionId, requestId, name`);
    out.push(m as Mark);
  }
  return out;
}
