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
