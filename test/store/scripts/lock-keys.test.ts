import { expect } from "chai";
import { Redis } from "ioredis";
import { escapeName, eventChannel, lockKeys, unescapeName } from "../../../server/store/redis/records/lock-keys.js";
import type { TestRedis } from "../../harness/redis-server.js";
import { startClusterNode } from "../../harness/start-cluster-node.js";
import { acquire, PREFIX, useScripts } from "./script-fixture.js";

// Names that try to end the hash tag early, open a second one, look like a key suffix or
// like an escape sequence.
const TRICKY = [
  "orders/42",
  "a}b",
  "a%7Db",
  "a{b",
  "a%7Bb",
  "{a}",
  "a{b}c",
  "}{",
  "a:b:c",
  "a}:holders",
  "100%",
  "%25",
  "%",
];

describe("lock keys of tricky names", () => {
  const f = useScripts();
  let node: TestRedis;
  let cluster: Redis;
  before(async () => {
    node = await startClusterNode();
    cluster = new Redis(node.url);
  });
  after(async () => {
    cluster?.disconnect();
    await node?.stop();
  });

  const keySlot = async (key: string) => Number(await cluster.call("CLUSTER", "KEYSLOT", key));

  it("puts all six keys of a name and its event channel in one slot: the slot of the escaped name", async () => {
    for (const name of TRICKY) {
      const slots = await Promise.all([...lockKeys(PREFIX, name), eventChannel(PREFIX, name)].map(keySlot));
      const expected = await keySlot(escapeName(name));
      expect(slots, name).to.deep.equal(Array(7).fill(expected));
    }
  });

  it("unescapes every escaped name back to the name", () => {
    for (const name of TRICKY) expect(unescapeName(escapeName(name)), name).to.equal(name);
  });

  it("escapes braces and percent signs, so no escaped name holds a brace", () => {
    expect(escapeName("a}b")).to.equal("a%7Db");
    expect(escapeName("{%}")).to.equal("%7B%25%7D");
    for (const name of TRICKY) expect(escapeName(name), name).not.to.match(/[{}]/);
  });

  it("gives a name and its escaped spelling different keys", () => {
    for (const [a, b] of [
      ["a}b", "a%7Db"],
      ["a{b", "a%7Bb"],
      ["%", "%25"],
    ]) {
      const shared = lockKeys(PREFIX, a).filter((key) => lockKeys(PREFIX, b).includes(key));
      expect(shared, `${a} vs ${b}`).to.deep.equal([]);
    }
  });

  it("keeps the locks of all these names apart in Redis", async () => {
    for (const name of TRICKY) {
      expect(await acquire(f, name, { session: "s1" }), name).to.deep.equal([1, "1", 1]);
    }
    // holders, data, fence and version of each lock: nothing shared between names.
    expect(await f.redis.dbsize()).to.equal(4 * TRICKY.length);
  });
});
