import { expect } from "chai";
import { Redis } from "ioredis";
import {
  LuaScript,
  ScriptBody,
  ScriptCommand,
  serialize,
} from "../../../server/store/redis/scripts/runner/script-command.js";
import { startRedis, type TestRedis } from "../../harness/redis-server.js";

/** RESP as the protocol spells it, one argument at a time: what serialize must write byte for byte. */
function reference(name: string, args: (string | Buffer)[]): Buffer {
  const bulk = (b: Buffer) => Buffer.concat([Buffer.from(`$${b.length}\r\n`), b, Buffer.from("\r\n")]);
  const all = [name, ...args].map((a) => (typeof a === "string" ? Buffer.from(a, "utf8") : a));
  return Buffer.concat([Buffer.from(`*${all.length}\r\n`), ...all.map(bulk)]);
}

const ARGS: Record<string, (string | Buffer)[]> = {
  "ASCII text and numbers as text": ["lock/a", "s1:o1", "30000", "0", ""],
  "UTF-8 text (2, 3 and 4 bytes a character)": ["é", "ключ", "锁/名", "🔒 lock", "a\u0000b"],
  "lone surrogates (written as U+FFFD, as Buffer.from writes them)": ["a\ud800b", "\udc00", "x\ud83d"],
  "an empty Buffer": ["x", Buffer.alloc(0), "y"],
  "binary Buffers, first, between and last": [
    Buffer.from([0xff, 0x00, 0x0d, 0x0a]),
    "mid",
    Buffer.from("é", "utf8"),
    Buffer.from([0x80]),
  ],
  "UTF-8 text only after a Buffer (the ASCII guess fails on the last part)": ["a", Buffer.from([1]), "b", "é"],
  "UTF-8 text only before a Buffer (the ASCII guess fails on the first part)": ["é", Buffer.from([1]), "b"],
  "no arguments": [],
};

describe("ScriptCommand's RESP (serialize)", () => {
  for (const [what, args] of Object.entries(ARGS))
    it(`writes ${what} byte for byte as RESP spells it`, () => {
      expect(serialize("evalsha", args).equals(reference("evalsha", args))).to.equal(true);
    });

  it("writes a command with a ScriptBody as the same bytes as with its keys and arguments (EVAL, then EVALSHA)", () => {
    const script = new LuaScript("return 1 -- é", 1);
    const keys = ["k/ключ", "k2"];
    const args = [...Object.values(ARGS).flat(), 7];
    const body = new ScriptBody(keys, args);
    const [plain, bodied] = [{}, {}];
    for (let i = 0; i < 2; i++) {
      const expected = new ScriptCommand(script, keys, args, "utf8").toWritable(plain);
      const command = ScriptCommand.withBody(script, body, "utf8");
      expect(command.toWritable(bodied).equals(expected)).to.equal(true);
      expect(command.name).to.equal(i === 0 ? "eval" : "evalsha");
    }
  });

  describe("against a real redis-server", () => {
    let server: TestRedis;
    let redis: Redis;
    before(async () => {
      server = await startRedis();
      redis = new Redis(server.url);
    });
    after(async () => {
      redis?.disconnect();
      await server?.stop();
    });

    it("reaches a script as the same bytes, keys and arguments (EVAL first, then EVALSHA)", async () => {
      const script = new LuaScript("return {KEYS[1], unpack(ARGV)}", 1);
      const args = Object.values(ARGS).flat();
      const expected = args.map((a) => (typeof a === "string" ? Buffer.from(a, "utf8") : a));
      for (const name of ["eval", "evalsha"]) {
        const command = new ScriptCommand(script, ["k/ключ"], args, null);
        const reply = (await redis.sendCommand(command)) as Buffer[];
        expect(command.name, "the first command on a connection carries the text").to.equal(name);
        expect(reply[0].toString("utf8")).to.equal("k/ключ");
        expect(reply.slice(1).map((b) => b.toString("hex"))).to.deep.equal(expected.map((b) => b.toString("hex")));
      }
    });

    it("reaches a script with a ScriptBody as the same keys and arguments: EVAL, EVALSHA, EVAL after NOSCRIPT", async () => {
      const script = new LuaScript("return {KEYS[1], KEYS[2], unpack(ARGV)}", 2);
      const body = new ScriptBody(["k/ключ", "k2"], ["a", "é", 7]);
      const reply = ["k/ключ", "k2", "a", "é", "7"];
      const send = async () => {
        const command = ScriptCommand.withBody(script, body, "utf8");
        const answer = await redis.sendCommand(command);
        return { name: command.name, reply: answer };
      };
      expect(await send()).to.deep.equal({ name: "eval", reply });
      expect(await send()).to.deep.equal({ name: "evalsha", reply });
      await redis.script("FLUSH");
      const lost = ScriptCommand.withBody(script, body, "utf8");
      expect(await (redis.sendCommand(lost) as Promise<unknown>).then(String, String)).to.match(/NOSCRIPT/);
      lost.forgetLoaded();
      expect(await send()).to.deep.equal({ name: "eval", reply });
    });
  });
});
