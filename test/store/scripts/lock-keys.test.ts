import { expect } from "chai";
import { Redis } from "ioredis";
import {
  escapeName,
  eventChannel,
  lockKeys,
  nameHashTag,
  nameOfDataKey,
  unescapeName,
} from "../../../server/store/redis/records/lock-keys.js";
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
  "{}x",
  "{a{b}c",
  "x/{a}",
  ":{a}",
  "{a}}",
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

  it("puts all six keys of a name and its event channel in one slot: its hash tag's, else the escaped name's", async () => {
    for (const name of TRICKY) {
      const slots = await Promise.all([...lockKeys(PREFIX, name), eventChannel(PREFIX, name)].map(keySlot));
      const tag = nameHashTag(name);
      const expected = await keySlot(tag ?? escapeName(name));
      expect(slots, name).to.deep.equal(Array(7).fill(expected));
      // With a tag, the lock's slot is the one Redis gives the name itself.
      if (tag !== undefined) expect(await keySlot(name), name).to.equal(expected);
    }
  });

  it("reads a name's hash tag by Redis's rule: from the first { to the next }, when not empty", () => {
    const tags = ["{orders}/a", "a/{orders}/b", "{}x", "{a{b}c", "{a}}", "a{b", "}{a}", "plain"].map(nameHashTag);
    expect(tags).to.deep.equal(["orders", "orders", undefined, "a{b", "a", undefined, "a", undefined]);
  });

  it("gives names that share a hash tag one slot and keys of their own", async () => {
    const names = ["{orders}/a", "{orders}/b", "x/{orders}", "orders"];
    const slots = await Promise.all(names.map((n) => keySlot(lockKeys(PREFIX, n)[0])));
    expect(new Set(slots).size).to.equal(1);
    const keys = names.flatMap((n) => lockKeys(PREFIX, n));
    expect(new Set(keys).size).to.equal(keys.length);
  });

  it("reads every name back from its data key, and nothing from other keys", () => {
    for (const name of TRICKY) expect(nameOfDataKey(PREFIX, lockKeys(PREFIX, name)[1]), name).to.equal(name);
    for (const key of [
      ...lockKeys(PREFIX, "{a}b").filter((_k, i) => i !== 1),
      `${PREFIX}:session:{x}`,
      "other:{a}:data",
    ])
      expect(nameOfDataKey(PREFIX, key), key).to.equal(undefined);
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
