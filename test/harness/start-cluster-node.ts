import { startRedis, type TestRedis } from "./redis-server.js";

/**
 * Starts a lone redis-server with cluster support on and no slots assigned: it cannot serve keys,
 * but answers `CLUSTER KEYSLOT`, which a plain redis-server refuses.
 */
export function startClusterNode(): Promise<TestRedis> {
  return startRedis({ args: ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"] });
}
