const CRLF = Buffer.from("\r\n");
const ARRAY = 0x2a; // '*'

/**
 * Reads the client's direction of a RESP connection (Redis's protocol) as it passes and counts the
 * commands in it, however TCP split or joined them. Each command is an array of bulk strings, as
 * ioredis writes every command (it never sends inline commands); a script counts once, however many
 * calls it makes inside Redis.
 */
export class RespCommandMeter {
  private pending: Buffer = Buffer.alloc(0);

  /** `sent` is where the count adds up (one total may take several connections' meters). */
  constructor(private readonly sent: { commands: number }) {}

  /** Reads the next chunk the client wrote. */
  push(chunk: Buffer): void {
    const buffer = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    let at = 0;
    for (let end = commandEnd(buffer, at); end > 0; end = commandEnd(buffer, at)) {
      this.sent.commands += 1;
      at = end;
    }
    this.pending = buffer.subarray(at);
  }
}

/** The offset just past the command that starts at `at`, or -1 while it has not all arrived. */
function commandEnd(buffer: Buffer, at: number): number {
  const header = lineAt(buffer, at);
  if (!header) return -1;
  if (buffer[at] !== ARRAY) throw new Error(`RESP: a command starts with '*', not ${JSON.stringify(header.text)}`);
  let next = header.next;
  for (let i = 0; i < Number(header.text.slice(1)); i++) {
    const bulk = lineAt(buffer, next);
    if (!bulk) return -1;
    next = bulk.next + Number(bulk.text.slice(1)) + CRLF.length;
    if (next > buffer.length) return -1;
  }
  return next;
}

/** The line (type byte and number) that starts at `at`, and where the next starts; undefined while incomplete. */
function lineAt(buffer: Buffer, at: number): { text: string; next: number } | undefined {
  const end = buffer.indexOf(CRLF, at);
  return end < 0 ? undefined : { text: buffer.toString("latin1", at, end), next: end + CRLF.length };
}
