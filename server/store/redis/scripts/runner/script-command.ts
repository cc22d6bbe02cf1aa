import { createHash } from "node:crypto";
import { Command } from "ioredis";
import { CommandDeadlines } from "./command-deadlines.js";

/** One script argument; Buffers pass binary values unchanged. */
export type ScriptArg = string | number | Buffer;

const CRLF = "\r\n";

/** The command timeouts of every script command in the process (ScriptCommand.setTimeout). */
export const SCRIPT_DEADLINES = new CommandDeadlines();

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

  /** Given a ScriptBody, its RESP is written as it is and `args` lists only the SHA (or text) and the key count. */
  private body?: ScriptBody;

  /** Whether its command timeout is kept (a Cluster redirect sends a command again: one timeout). */
  private timed = false;

  constructor(
    private readonly script: LuaScript,
    keys: readonly string[],
    args: readonly ScriptArg[],
    replyEncoding: "utf8" | null,
  ) {
    // The arguments are set here, already flat and as text, rather than given to Command, which
    // flattens and converts them again (a few µs per script on the hot path).
    super("evalsha", [], { replyEncoding });
    this.args = scriptArgs(keys, args, script.sha);
  }

  /** The command of `script` with keys and arguments already in RESP: only its head is built per command. */
  static withBody(script: LuaScript, body: ScriptBody, replyEncoding: "utf8" | null): ScriptCommand {
    const command = new ScriptCommand(script, [], [], replyEncoding);
    command.body = body;
    command.args = [script.sha, String(body.keyCount)];
    return command;
  }

  /**
   * ioredis's command timeout (the connection's `commandTimeout`), kept by SCRIPT_DEADLINES: one timer
   * for all script commands instead of one per command, which ioredis would make and clear for each.
   */
  override setTimeout(ms: number): void {
    if (this.timed) return;
    this.timed = true;
    SCRIPT_DEADLINES.add(this, ms);
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
    const body = this.body;
    if (!body) return serialize(this.name, this.args as (string | Buffer)[]);
    const head = respOf(`*${2 + body.count}${CRLF}`, this.name, [this.args[0] as string]);
    return Buffer.concat([head, body.resp], head.length + body.resp.length);
  }
}

/**
 * A script's key count, keys and arguments in RESP, encoded once, for a command sent again and again with
 * the same ones (a session's idle keepalives: issue 25). Its own memory, not a slice of Node's pool.
 */
export class ScriptBody {
  /** Bulk strings in `resp`: the key count, the keys, the arguments. */
  readonly count: number;
  readonly keyCount: number;
  readonly resp: Buffer;

  constructor(keys: readonly string[], args: readonly ScriptArg[]) {
    const all = scriptArgs(keys, args);
    const resp = respOf("", undefined, all);
    this.count = all.length;
    this.keyCount = keys.length;
    this.resp = Buffer.allocUnsafeSlow(resp.length);
    resp.copy(this.resp);
  }
}

/** A script's key count, keys and arguments as ScriptCommand sends them after the SHA (`sha`, if given, first). */
function scriptArgs(keys: readonly string[], args: readonly ScriptArg[], sha?: string): (string | Buffer)[] {
  // keys.length, not numberOfKeys: acquire-set takes numberOfKeys per name of its set.
  const all: (string | Buffer)[] =
    sha === undefined ? [String(keys.length), ...keys] : [sha, String(keys.length), ...keys];
  // String(n) is ioredis's text for every safe integer; no script argument is past 2^53 (durations and
  // counts are bounded by validation), where ioredis would write the BigInt digits instead.
  for (const arg of args) all.push(typeof arg === "number" ? String(arg) : arg);
  return all;
}

/**
 * The RESP array of `name` and `args` (strings and Buffers: ScriptCommand has turned numbers into text),
 * built as one string and encoded once: one native call per command rather than three per argument,
 * which had made this a tenth of a busy coordinator's CPU. A non-empty Buffer is copied in as it is.
 * Text is first taken as ASCII (a byte per UTF-16 unit: no argument's length is counted); if the encoding
 * says it was not, the command is built again with each argument's byte count (native).
 */
export function serialize(name: string, args: readonly (string | Buffer)[]): Buffer {
  return respOf(`*${args.length + 1}${CRLF}`, name, args);
}

/** `head` (ASCII RESP), then `first` (if given) and `args` as RESP bulk strings. */
function respOf(head: string, first: string | undefined, args: readonly (string | Buffer)[]): Buffer {
  return build(head, first, args, false) ?? (build(head, first, args, true) as Buffer);
}

/**
 * respOf with each string's UTF-8 length `counted`, or taken as its length (undefined if that was
 * wrong: UTF-8 has one byte per UTF-16 unit only when every unit is ASCII, any other takes 2 to 4).
 */
function build(
  head: string,
  first: string | undefined,
  args: readonly (string | Buffer)[],
  counted: boolean,
): Buffer | undefined {
  let text =
    first === undefined
      ? head
      : `${head}$${counted ? Buffer.byteLength(first, "utf8") : first.length}${CRLF}${first}${CRLF}`;
  let parts: Buffer[] | undefined;
  for (const arg of args) {
    if (typeof arg === "string")
      text += `$${counted ? Buffer.byteLength(arg, "utf8") : arg.length}${CRLF}${arg}${CRLF}`;
    else if (arg.length === 0) text += `$0${CRLF}${CRLF}`;
    else {
      const bulkHead = encode(`${text}$${arg.length}${CRLF}`, counted);
      if (!bulkHead) return undefined;
      parts ??= [];
      parts.push(bulkHead, arg);
      text = CRLF;
    }
  }
  const last = encode(text, counted);
  if (!last || !parts) return last;
  parts.push(last);
  return Buffer.concat(parts);
}

/** `text` in UTF-8; unless its lengths were `counted`, undefined when it was not all ASCII. */
function encode(text: string, counted: boolean): Buffer | undefined {
  const bytes = Buffer.from(text, "utf8");
  return counted || bytes.length === text.length ? bytes : undefined;
}
