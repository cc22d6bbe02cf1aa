import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { ROOT } from "./installed-package.js";

// package.json's `engines.node` is a promise: every package the lockfile installs must accept its
// lowest version (the runtime ones) and the Node running the tests (all of them: what `npm ci` checks,
// so it prints no EBADENGINE). The ranges in the lockfile use only the simple semver forms below.

type Version = [number, number, number];

function version(text: string): Version {
  const [major = 0, minor = 0, patch = 0] = text
    .replace(/^v/, "")
    .split(".")
    .map((part) => (/^\d+$/.test(part) ? Number(part) : 0));
  return [major, minor, patch];
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** Whether `v` satisfies one comparator: `>=X`, `>X`, `<X`, `<=X`, `^X`, `X`, `X.*`, `X.x`. */
function satisfiesOne(v: Version, comparator: string): boolean {
  const match = /^(>=|<=|>|<|\^|=)?\s*v?([\d.x*]+)$/.exec(comparator);
  if (!match) throw new Error(`unsupported engines comparator "${comparator}"`);
  const [, op = "", text] = match;
  const parts = text.split(".").filter((p) => p !== "x" && p !== "*");
  const base = version(parts.join("."));
  const cmp = compare(v, base);
  if (op === ">=") return cmp >= 0;
  if (op === ">") return cmp > 0;
  if (op === "<") return cmp < 0;
  if (op === "<=") return cmp <= 0;
  if (op === "^") return cmp >= 0 && v[0] === base[0];
  // A bare or partial version: every given part must match.
  return parts.every((p, i) => v[i] === Number(p));
}

/** Whether `v` satisfies a range: alternatives split by `||`, each a space-separated conjunction. */
function satisfies(v: Version, range: string): boolean {
  return range.split("||").some((alternative) =>
    alternative
      .trim()
      .replace(/(>=|<=|>|<|\^|=)\s+/g, "$1")
      .split(/\s+/)
      .every((comparator) => satisfiesOne(v, comparator)),
  );
}

interface LockEntry {
  dev?: boolean;
  optional?: boolean;
  engines?: { node?: string };
}

const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
  packages: Record<string, LockEntry>;
};
const installed = Object.entries(lock.packages).filter(([path, p]) => path !== "" && p.engines?.node);

describe("Node versions: what package.json's engines promises, the lockfile keeps", () => {
  it("reads every engines range of the lockfile (the checker understands them)", () => {
    expect(satisfies(version("20.6.0"), "^18.19.0 || >=20.6.0")).to.equal(true);
    expect(satisfies(version("20.5.1"), "^18.19.0 || >=20.6.0")).to.equal(false);
    expect(satisfies(version("20.20.2"), ">=22.15.0")).to.equal(false);
    expect(satisfies(version("20.1.0"), "6.* || 8.* || >= 10.*")).to.equal(true);
    for (const [, p] of installed) satisfies(version("20.6.0"), p.engines!.node!);
  });

  it("installs no runtime dependency that refuses the lowest Node that engines.node accepts", () => {
    const floor = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(manifest.engines.node)?.[1];
    expect(floor, `engines.node "${manifest.engines.node}" is not ">=X.Y.Z"`).to.be.a("string");
    const refusing = installed
      .filter(([, p]) => !p.dev && !satisfies(version(floor!), p.engines!.node!))
      .map(([path, p]) => `${path}: ${p.engines!.node}`);
    expect(refusing, `runtime packages that refuse Node ${floor}`).to.deep.equal([]);
  });

  it(`installs no package that refuses the Node running the tests (${process.version}): npm ci warns of none`, () => {
    const refusing = installed
      .filter(([, p]) => !p.optional && !satisfies(version(process.version), p.engines!.node!))
      .map(([path, p]) => `${path}: ${p.engines!.node}`);
    expect(refusing).to.deep.equal([]);
  });

  it("the client package promises the same Node as the root (its package.json and the lockfile)", () => {
    const client = JSON.parse(readFileSync(join(ROOT, "packages/client/package.json"), "utf8")) as {
      engines: { node: string };
    };
    expect([client.engines.node, lock.packages["packages/client"].engines?.node]).to.deep.equal([
      manifest.engines.node,
      manifest.engines.node,
    ]);
  });
});
