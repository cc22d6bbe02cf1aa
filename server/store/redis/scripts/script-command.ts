import { createHash } from "node:crypto";
import { Command } from "ioredis";

/** One script argument; Buffers pass binary values unchanged. */
export type ScriptArg = string | number | Buffer;

const CRLF = "\r\n";

/** One Lua script as Redis knows it: its text and SHA1, and the connections that have run it. */
export class LuaScript {
  readonly sha: string;
  /** Sockets this script was sent on in full (EVAL), so EVALSHA finds it there. */
  readonly loadedOn = new WeakSet<object>();

  constructor(
    readonly lua: string,
    readonly numberOfKeys: number,
  ) {
    this.sha = createHash("sha1").update(lua).digest("hex");
  }
}

/**
 * An EVALSHA of one script, written as one Buffer built in one pass (ioredis's own script commands
 * build a string per argument and a wrapper per call). As ioredis does, the first command on a
 * connection sends the script in full (EVAL), so the commands behind it never meet NOSCRIPT; after a
 * NOSCRIPT (the server lost its script cache, `forgetLoaded`) that connection gets the full text again.
 */
export class ScriptCommand extends Command {
  private socket?: object;

  constructor(
    private readonly script: LuaScript,
    keys: readonly string[],
    args: readonly ScriptArg[],
    replyEncoding: "utf8" | null,
  ) {
    // keys.length, not numberOfKeys: acquire-set takes numberOfKeys per name of its set.
    super("evalsha", [script.sha, keys.length, ...keys, ...args], { replyEncoding });
  }

  /** Redis answered NOSCRIPT: the connection this went out on gets the script's text next time. */
  forgetLoaded(): void {
    if (this.socket) this.script.loadedOn.delete(this.socket);
  }

  override toWritable(socket: object): Buffer {
    this.socket = socket;
    if (!this.script.loadedOn.has(socket)) {
      this.script.loadedOn.add(socket);
      this.name = "eval";
      this.args[0] = this.script.lua;
    } else if (this.name === "eval") {
      this.name = "evalsha";
      this.args[0] = this.script.sha;
    }
    return serialize(this.name, this.args as (string | Buffer)[]);
  }
}

/** The RESP array of `name` and `args` (strings and Buffers: ioredis has turned numbers into strings). */
function serialize(name: string, args: (string | Buffer)[]): Buffer {
  let size = byteLengthOfBulk(name);
  for (const arg of args)
    size += typeof arg === "string" ? byteLengthOfBulk(arg) : bulkHeaderLength(arg.length) + arg.length + 2;
  const header = `*${args.length + 1}${CRLF}`;
  const out = Buffer.allocUnsafe(header.length + size);
  let at = out.write(header, 0, "latin1");
  at = writeBulk(out, at, name);
  for (const arg of args) at = writeBulk(out, at, arg);
  return out;
}

function writeBulk(out: Buffer, at: number, value: string | Buffer): number {
  const length = typeof value === "string" ? Buffer.byteLength(value) : value.length;
  at += out.write(`$${length}${CRLF}`, at, "latin1");
  at += typeof value === "string" ? out.write(value, at, "utf8") : value.copy(out, at);
  return at + out.write(CRLF, at, "latin1");
}

function byteLengthOfBulk(value: string): number {
  const length = Buffer.byteLength(value);
  return bulkHeaderLength(length) + length + 2;
}

function bulkHeaderLength(length: number): number {
  return String(length).length + 3;
}
