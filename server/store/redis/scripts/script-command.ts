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
    // The arguments are set here, already flat and as text, rather than given to Command, which
    // flattens and converts them again (a few µs per script on the hot path).
    super("evalsha", [], { replyEncoding });
    // keys.length, not numberOfKeys: acquire-set takes numberOfKeys per name of its set.
    const all: (string | Buffer)[] = [script.sha, String(keys.length), ...keys];
    // String(n) is ioredis's text for every safe integer; no script argument is past 2^53 (durations and
    // counts are bounded by validation), where ioredis would write the BigInt digits instead.
    for (const arg of args) all.push(typeof arg === "number" ? String(arg) : arg);
    this.args = all;
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

/**
 * The RESP array of `name` and `args` (strings and Buffers: ScriptCommand has turned numbers into text),
 * built as one string and encoded once: one native call per command rather than three per argument,
 * which had made this a tenth of a busy coordinator's CPU (the command name is ASCII; each argument's byte
 * count is native: faster than counting ASCII in JavaScript). A non-empty Buffer is copied in as it is.
 */
export function serialize(name: string, args: readonly (string | Buffer)[]): Buffer {
  let text = `*${args.length + 1}${CRLF}$${name.length}${CRLF}${name}${CRLF}`;
  let parts: Buffer[] | undefined;
  for (const arg of args) {
    if (typeof arg === "string") text += `$${Buffer.byteLength(arg, "utf8")}${CRLF}${arg}${CRLF}`;
    else if (arg.length === 0) text += `$0${CRLF}${CRLF}`;
    else {
      parts ??= [];
      parts.push(Buffer.from(`${text}$${arg.length}${CRLF}`, "utf8"), arg);
      text = CRLF;
    }
  }
  if (!parts) return Buffer.from(text, "utf8");
  parts.push(Buffer.from(text, "utf8"));
  return Buffer.concat(parts);
}
