import { Redis } from "ioredis";

/** One Cluster node as a slot migration needs it: its port and its node id. */
export interface MigrationNode {
  port: number;
  id: string;
}

/**
 * One slot being moved by hand, the way `redis-cli --cluster reshard` moves it (CLUSTER SETSLOT
 * IMPORTING on the target, MIGRATING on the source, MIGRATE of its keys, SETSLOT NODE everywhere),
 * in steps a test can stop between: `move` a few keys, look, `finish`.
 */
export interface SlotMigration {
  readonly slot: number;
  /** The keys of the slot still on the source (up to 1000). */
  keysLeft(): Promise<string[]>;
  /** MIGRATEs `keys` (default: every key left) from the source to the target in one command. */
  move(keys?: string[]): Promise<void>;
  /** Moves every key left, then assigns the slot to the target on the target, the source and `others`. */
  finish(others?: number[]): Promise<void>;
  close(): void;
}

/** The id of the node on `port` (CLUSTER MYID). */
export async function nodeId(port: number): Promise<string> {
  const redis = connect(port);
  try {
    return String(await redis.call("CLUSTER", "MYID"));
  } finally {
    redis.disconnect();
  }
}

/** Starts moving `slot` from `from` to `to`: the target imports it, the source migrates it. */
export async function startSlotMigration(slot: number, from: MigrationNode, to: MigrationNode): Promise<SlotMigration> {
  const [source, target] = [connect(from.port), connect(to.port)];
  await target.call("CLUSTER", "SETSLOT", slot, "IMPORTING", from.id);
  await source.call("CLUSTER", "SETSLOT", slot, "MIGRATING", to.id);
  const keysLeft = async () => (await source.call("CLUSTER", "GETKEYSINSLOT", slot, 1000)) as string[];
  const move = async (keys?: string[]) => {
    const batch = keys ?? (await keysLeft());
    if (batch.length > 0) await source.call("MIGRATE", "127.0.0.1", to.port, "", 0, 10_000, "KEYS", ...batch);
  };
  return {
    slot,
    keysLeft,
    move,
    async finish(others = []) {
      for (let left = await keysLeft(); left.length > 0; left = await keysLeft()) await move(left);
      // The target first, as redis-cli does: then the source's MOVED points to a node that serves the slot.
      await target.call("CLUSTER", "SETSLOT", slot, "NODE", to.id);
      await source.call("CLUSTER", "SETSLOT", slot, "NODE", to.id);
      for (const port of others) {
        const other = connect(port);
        try {
          await other.call("CLUSTER", "SETSLOT", slot, "NODE", to.id);
        } finally {
          other.disconnect();
        }
      }
    },
    close() {
      source.disconnect();
      target.disconnect();
    },
  };
}

/** How often the node on `port` answered `error` (INFO errorstats: TRYAGAIN, ASK, MOVED, ...). */
export async function errorCount(port: number, error: string): Promise<number> {
  const redis = connect(port);
  try {
    const match = new RegExp(`errorstat_${error}:count=(\\d+)`).exec(await redis.info("errorstats"));
    return match ? Number(match[1]) : 0;
  } finally {
    redis.disconnect();
  }
}

function connect(port: number): Redis {
  const redis = new Redis({ port, host: "127.0.0.1", maxRetriesPerRequest: 0 });
  redis.on("error", () => {});
  return redis;
}
