import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One project's installed node_modules tree, read from the package-lock.json that `npm install` wrote. */
export interface InstalledTree {
  /** Every installed package as "name@version", nested copies included, sorted. */
  packages: string[];
  /** Bytes on disk under node_modules/ (file sizes, not blocks). */
  bytes: number;
  /** The names of the packages `roots` depend on, transitively, the roots included. */
  closure(roots: string[]): Set<string>;
  /** Bytes on disk of the named top-level packages. */
  bytesOf(names: Iterable<string>): number;
}

/** Reads `project`'s installed tree. */
export function installedTree(project: string): InstalledTree {
  const lock = JSON.parse(readFileSync(join(project, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version?: string; dependencies?: Record<string, string>; link?: boolean }>;
  };
  const installed = Object.entries(lock.packages).filter(([path]) => path.startsWith("node_modules/"));
  const nameOf = (path: string) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
  const dependenciesOf = (name: string) => Object.keys(lock.packages[`node_modules/${name}`]?.dependencies ?? {});
  return {
    packages: installed.map(([path, entry]) => `${nameOf(path)}@${entry.version}`).sort(),
    bytes: treeBytes(join(project, "node_modules")),
    closure(roots) {
      const seen = new Set<string>();
      const stack = [...roots];
      for (let name = stack.pop(); name !== undefined; name = stack.pop()) {
        if (seen.has(name)) continue;
        seen.add(name);
        stack.push(...dependenciesOf(name));
      }
      return seen;
    },
    bytesOf: (names) => [...names].reduce((sum, n) => sum + treeBytes(join(project, "node_modules", n)), 0),
  };
}

/** The name of an installed "name@version" (scoped names keep their scope). */
export function packageName(nameAtVersion: string): string {
  return nameAtVersion.slice(0, nameAtVersion.lastIndexOf("@"));
}

function treeBytes(path: string): number {
  // lstat: a node_modules/.bin link counts as a link, not as the file it points to again.
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, entry) => sum + treeBytes(join(path, entry)), 0);
}
