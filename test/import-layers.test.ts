import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";

// The layer rule of docs/architecture.md, read from the sources' relative imports.
const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Every .ts file under `folder` (relative to the repository root). */
function sources(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(folder, f));
}

/** Every module specifier `file` imports (static imports, re-exports, import()), relative or bare. */
function specifiersOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  return [...text.matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)].map((m) => m[1]);
}

/** The repository files `file` imports by relative path (static imports, re-exports, import()). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.\.?\/[^"]+)"/g)].map((m) => m[1]);
  return specifiers.map((s) => normalize(join(dirname(file), s)).replace(/\.js$/, ".ts"));
}

/** "file -> import" for every import of the files under `folder` that `allowed` refuses. */
function violations(folder: string, allowed: (target: string) => boolean): string[] {
  return sources(folder).flatMap((file) =>
    importsOf(file)
      .filter((target) => !allowed(target))
      .map((target) => `${file} -> ${target}`),
  );
}

/**
 * One cycle per back edge a depth-first walk of `graph` (file -> the files it imports) meets, as
 * "a -> b -> a": none means the graph has no cycle at all. Imports of files outside the graph end there.
 */
function importCycles(graph: Map<string, string[]>): string[] {
  const cycles: string[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string) => {
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) cycles.push([...path.slice(at), next].join(" -> "));
      else if (!done.has(next) && graph.has(next)) visit(next);
    }
    path.pop();
    done.add(file);
  };
  for (const file of graph.keys()) if (!done.has(file)) visit(file);
  return cycles;
}

type Layer = "seam" | "store" | "engine" | "operations" | "edge" | "console" | "root" | "cli";

/**
 * The layers of server/, by folder (docs/architecture.md, *Layers*): the first prefix that matches a
 * file names its layer.
 */
const SERVER_LAYERS: [prefix: string, layer: Layer][] = [
  ["server/store/memory/", "store"],
  ["server/store/redis/", "store"],
  ["server/store/", "seam"],
  ["server/engine/", "engine"],
  ["server/config/", "operations"],
  ["server/security/", "operations"],
  ["server/metrics/", "operations"],
  ["server/tracing/", "operations"],
  ["server/edge/", "edge"],
  ["server/console/", "console"],
  ["server/cli/", "cli"],
  ["server/coordinator.ts", "root"],
];

/**
 * What each layer may import, inside server/ and out of it. Down only: the engine sees the store seam
 * alone (no gen/, no wire/, no grpc-js); operations wrap or read the engine and the store, never the
 * edge; the edge renders the engine into gen/ messages; the console serves the edge's admin calls over
 * HTTP; the composition root wires them all; cli/ starts the process.
 */
const MAY_IMPORT: Record<Layer, { layers: Layer[]; outside: string[] }> = {
  seam: { layers: ["seam"], outside: ["wire/request-limits.ts"] },
  store: { layers: ["seam", "store"], outside: ["wire/request-limits.ts"] },
  engine: { layers: ["seam", "engine"], outside: [] },
  operations: { layers: ["seam", "store", "engine", "operations"], outside: ["gen/", "wire/"] },
  edge: { layers: ["seam", "engine", "operations", "edge"], outside: ["gen/", "wire/"] },
  console: { layers: ["seam", "engine", "operations", "edge", "console"], outside: ["gen/", "wire/"] },
  root: { layers: ["seam", "store", "engine", "operations", "edge"], outside: ["gen/", "wire/"] },
  cli: {
    layers: ["seam", "store", "engine", "operations", "edge", "console", "root", "cli"],
    outside: ["gen/", "wire/"],
  },
};

/** The layer of a server file; undefined for a file no prefix names (the layer rule fails on it). */
function layerOf(file: string): Layer | undefined {
  return SERVER_LAYERS.find(([prefix]) => file === prefix || file.startsWith(prefix))?.[1];
}

/** "file -> import (layer -> layer)" for every import in server/ that its layer may not make. */
function layerViolations(): string[] {
  return sources("server").flatMap((file) => {
    const from = layerOf(file);
    if (!from) return [`${file}: in no layer (add its folder to SERVER_LAYERS)`];
    const rule = MAY_IMPORT[from];
    return importsOf(file)
      .filter((target) => {
        if (!target.startsWith("server/")) return !rule.outside.some((o) => target === o || target.startsWith(o));
        const to = layerOf(target);
        return to === undefined || !rule.layers.includes(to);
      })
      .map((target) => `${file} -> ${target} (${from} -> ${layerOf(target) ?? "outside server/"})`);
  });
}

/**
 * Each folder-level cycle of `graph` (file -> the files it imports; a file's folder is the directory
 * holding it) as "a, b: a/x.ts -> b/y.ts; b/y.ts -> a/w.ts": the folders of one strongly connected set
 * and the imports inside it that close it. None means the folders import one way.
 */
function folderCycles(graph: Map<string, string[]>): string[] {
  const edges = new Map<string, Map<string, string>>();
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const [a, b] = [dirname(file), dirname(target)];
      if (a === b || !graph.has(target)) continue;
      const out = edges.get(a) ?? edges.set(a, new Map()).get(a)!;
      if (!out.has(b)) out.set(b, `${file} -> ${target}`);
    }
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[] = [];
  const strong = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const set = stack.splice(stack.indexOf(v));
    if (set.length < 2) return;
    const closing = set.flatMap((a) => [...(edges.get(a) ?? [])].filter(([b]) => set.includes(b)).map(([, e]) => e));
    cycles.push(`${set.sort().join(", ")}: ${closing.sort().join("; ")}`);
  };
  for (const folder of new Set([...graph.keys()].map((f) => dirname(f)))) if (!index.has(folder)) strong(folder);
  return cycles;
}

const under = (target: string, ...folders: string[]) => folders.some((f) => target.startsWith(`${f}/`));

describe("import layers (proto → gen → wire → server | client → cli)", () => {
  it("keeps wire/ on gen/ alone", () => {
    expect(violations("wire", (t) => under(t, "gen", "wire"))).to.deep.equal([]);
  });

  it("keeps the client off server/ and cli/", () => {
    expect(violations("client", (t) => under(t, "client", "gen", "wire"))).to.deep.equal([]);
  });

  it("keeps the server off client/ and cli/", () => {
    expect(violations("server", (t) => under(t, "server", "gen", "wire"))).to.deep.equal([]);
  });

  // The build depends on this rule: in the coordinator package, dist/client/ is nothing but re-exports
  // of turnstile-locks-client's two entries (scripts/build.js), so a deeper import would not resolve.
  it("lets cli/ and bin/ reach the client only through client/index.ts and client/admin.ts, never server code from cli/", () => {
    const entry = (t: string) => t === "client/index.ts" || t === "client/admin.ts";
    expect(violations("cli", (t) => under(t, "cli", "gen", "wire") || entry(t))).to.deep.equal([]);
    expect(violations("bin", (t) => !under(t, "client") || entry(t))).to.deep.equal([]);
  });

  it("keeps every server/ layer importing down only: edge -> engine -> store seam, operations beside", () => {
    const found = layerViolations();
    expect(found, `imports against the layers:\n${found.join("\n")}`).to.deep.equal([]);
  });

  it("keeps the engine off gen/, wire/, grpc-js and every package but pino and node: builtins", () => {
    const found = sources("server/engine").flatMap((file) =>
      specifiersOf(file)
        .filter((s) => !s.startsWith(".") && !s.startsWith("node:") && s !== "pino")
        .map((s) => `${file} -> ${s}`),
    );
    expect(found, `packages the engine imports:\n${found.join("\n")}`).to.deep.equal([]);
  });

  it("has no folder-level import cycle anywhere in server/, the Redis store's subfolders included, not even a type-only one", () => {
    const files = sources("server");
    const cycles = folderCycles(new Map(files.map((f) => [f, importsOf(f)])));
    expect(cycles, `folder cycles:\n${cycles.join("\n")}`).to.deep.equal([]);
  });

  it("finds a folder cycle when there is one, and prints it with the imports that close it", () => {
    const graph = new Map([
      ["a/x.ts", ["b/y.ts"]],
      ["b/y.ts", ["c/z.ts", "a/w.ts"]],
      ["a/w.ts", []],
      ["c/z.ts", []],
    ]);
    expect(folderCycles(graph)).to.deep.equal(["a, b: a/x.ts -> b/y.ts; b/y.ts -> a/w.ts"]);
    expect(
      folderCycles(
        new Map([
          ["a/x.ts", ["b/y.ts"]],
          ["b/y.ts", []],
        ]),
      ),
    ).to.deep.equal([]);
  });

  it("has no import cycle in server/, client/, cli/, wire/ or bench/, not even a type-only one", () => {
    const files = ["server", "client", "cli", "wire", "bench"].flatMap(sources);
    const cycles = importCycles(new Map(files.map((f) => [f, importsOf(f)])));
    expect(cycles, `import cycles:\n${cycles.join("\n")}`).to.deep.equal([]);
  });

  it("finds a cycle when there is one, and prints it", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts", "d.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", []],
    ]);
    expect(importCycles(graph)).to.deep.equal(["a.ts -> b.ts -> c.ts -> a.ts"]);
    expect(importCycles(new Map([["a.ts", ["a.ts"]]]))).to.deep.equal(["a.ts -> a.ts"]);
    expect(
      importCycles(
        new Map([
          ["a.ts", ["b.ts"]],
          ["b.ts", []],
        ]),
      ),
    ).to.deep.equal([]);
  });
});
