import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** How much `npm install turnstile` put into a project, and how much of it only the coordinator uses. */
export interface InstallFootprint {
  packages: number;
  bytes: number;
  /** Packages reachable only from the server's dependencies (ioredis, pino, …), not from the client's. */
  serverOnlyPackages: number;
  serverOnlyBytes: number;
}

/**
 * Measures the installed dependency tree of `turnstile` in `project` from its package-lock.json:
 * everything, and the part that the client's dependencies (`clientRoots`) do not reach.
 */
export function installFootprint(project: string, clientRoots: string[]): InstallFootprint {
  const lock = JSON.parse(readFileSync(join(project, "package-lock.json"), "utf8")) as {
    packages: Record<string, { dependencies?: Record<string, string> }>;
  };
  const dependenciesOf = (name: string) => Object.keys(lock.packages[`node_modules/${name}`]?.dependencies ?? {});
  const closure = (roots: string[]) => {
    const seen = new Set<string>();
    const stack = [...roots];
    for (let name = stack.pop(); name !== undefined; name = stack.pop()) {
      if (seen.has(name)) continue;
      seen.add(name);
      stack.push(...dependenciesOf(name));
    }
    return seen;
  };
  const all = closure(["turnstile"]);
  const client = closure(clientRoots).add("turnstile");
  const serverOnly = [...all].filter((name) => !client.has(name));
  const bytesOf = (names: Iterable<string>) =>
    [...names].reduce((sum, n) => sum + treeBytes(join(project, "node_modules", n)), 0);
  return {
    packages: all.size,
    bytes: bytesOf(all),
    serverOnlyPackages: serverOnly.length,
    serverOnlyBytes: bytesOf(serverOnly),
  };
}

function treeBytes(path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, entry) => sum + treeBytes(join(path, entry)), 0);
}
