import { createHash } from "node:crypto";
import type { Cluster, Redis } from "ioredis";
import type { LockPage } from "../../store.js";
import { keySlot } from "./key-slot.js";
import { lockKeys } from "./lock-keys.js";
import { lockSummaries, namesOf } from "./lock-summaries.js";

const SLOTS = 16_384;
/** Slots asked for per round trip to each master. */
const SLOTS_PER_BATCH = 1024;
/** Keys read of one slot at most (CLUSTER GETKEYSINSLOT has no cursor): about 16,000 locks in one slot. */
export const MAX_KEYS_PER_SLOT = 100_000;
/** Longest page token accepted back; longer ones were not issued here. */
const MAX_TOKEN_CHARS = 16_384;

/** What a page token carries: the next slot to read, the last name listed of it (null: none yet), the prefix's digest. */
interface Position {
  slot: number;
  after: string | null;
  prefix: string;
}

/**
 * Pages through the active locks of a Redis Cluster slot by slot, in slot order and by name within a
 * slot: for each batch of slots it asks every master in turn, one after the other, for the keys it has
 * in them (CLUSTER GETKEYSINSLOT), and keeps the locks' data keys. A slot that moves during the listing
 * is still read: a migration copies each key to the target before deleting it from the source, so
 * whichever master is asked second still finds a key the first one no longer had. Every lock present
 * for the whole listing is listed exactly once, whether its slot moves or not (a master that
 * takes its first slot during a listing counts from the next batch, once the slot map names it).
 */
export class ClusterLockLister {
  constructor(
    private readonly cluster: Cluster,
    private readonly keyPrefix: string,
  ) {}

  async list(prefix: string, pageSize: number, pageToken: string): Promise<LockPage | "invalid-token"> {
    const digest = createHash("sha256").update(prefix).digest("base64url").slice(0, 12);
    const position = pageToken === "" ? { slot: 0, after: null, prefix: digest } : decode(pageToken);
    if (!position || position.prefix !== digest || !(position.after ?? prefix).startsWith(prefix)) {
      return "invalid-token";
    }
    const found: string[] = [];
    let { slot, after } = position;
    while (found.length < pageSize && slot < SLOTS) {
      const end = Math.min(SLOTS, slot + SLOTS_PER_BATCH);
      const bySlot = await this.namesIn(slot, end, prefix);
      for (; slot < end && found.length < pageSize; slot++, after = null) {
        const from = after;
        const names = (bySlot.get(slot) ?? []).filter((n) => from === null || n > from);
        const taken = names.slice(0, pageSize - found.length);
        found.push(...taken);
        if (taken.length < names.length) {
          after = taken.at(-1) ?? after;
          break;
        }
      }
    }
    const done = slot >= SLOTS;
    const nextPageToken = done ? "" : encode({ slot, after, prefix: digest });
    const now = await this.clocks(found);
    return { locks: await lockSummaries(this.cluster, this.keyPrefix, found, now), nextPageToken };
  }

  /** The names (starting with `prefix`) of slots `from` to `end` - 1, each slot's sorted, from every master. */
  private async namesIn(from: number, end: number, prefix: string): Promise<Map<number, string[]>> {
    const bySlot = new Map<number, Set<string>>();
    // One master after the other, never at once: see the class comment.
    for (const node of this.cluster.nodes("master")) {
      const pipeline = node.pipeline();
      for (let slot = from; slot < end; slot++) pipeline.call("CLUSTER", "GETKEYSINSLOT", slot, MAX_KEYS_PER_SLOT);
      const replies = (await pipeline.exec()) ?? [];
      for (const [i, [err, keys]] of replies.entries()) {
        if (err) throw err;
        const names = namesOf(this.keyPrefix, keys as string[], prefix);
        if (names.length === 0) continue;
        const seen = bySlot.get(from + i) ?? new Set();
        for (const name of names) seen.add(name);
        bySlot.set(from + i, seen);
      }
    }
    return new Map([...bySlot].map(([slot, names]) => [slot, [...names].sort()]));
  }

  /** Each name's clock: the TIME, in ms, of the master serving its slot (asked once per master). */
  private async clocks(names: string[]): Promise<(name: string) => number> {
    if (names.length === 0) return () => 0;
    const masters = this.cluster.nodes("master");
    const addressOf = (node: Redis) => `${node.options.host}:${node.options.port}`;
    const times = new Map<string, number>();
    await Promise.all(
      masters.map(async (node) => {
        const [seconds, micros] = await node.time();
        times.set(addressOf(node), Number(seconds) * 1000 + Math.floor(Number(micros) / 1000));
      }),
    );
    const any = times.values().next().value ?? Date.now();
    return (name) => {
      const address = this.cluster.slots[keySlot(lockKeys(this.keyPrefix, name)[0])]?.[0];
      return (address === undefined ? undefined : times.get(address)) ?? any;
    };
  }
}

function encode(position: Position): string {
  return Buffer.from(JSON.stringify([position.slot, position.after, position.prefix])).toString("base64url");
}

function decode(token: string): Position | undefined {
  if (token.length > MAX_TOKEN_CHARS) return undefined;
  try {
    const [slot, after, prefix] = JSON.parse(Buffer.from(token, "base64url").toString());
    const slotOk = Number.isInteger(slot) && slot >= 0 && slot < SLOTS;
    const afterOk = after === null || typeof after === "string";
    return slotOk && afterOk && typeof prefix === "string" ? { slot, after, prefix } : undefined;
  } catch {
    return undefined;
  }
}
