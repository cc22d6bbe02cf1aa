// Which test suites need a redis-server, worked out from their imports so that no list is kept by
// hand: a suite needs Redis when it imports, directly or through other modules, one of the harness
// modules that start redis-server (REDIS_STARTERS). Every other suite is pure and runs without Redis
// (a suite that needs another tool, e.g. grpcurl or chromium, skips itself saying why).
// Read by .mocharc.cjs (plain CommonJS, because mocha loads its config before tsx); checked by
// test/suite-groups.test.ts.
const { existsSync, readdirSync, readFileSync, statSync } = require("node:fs");
const { dirname, join, relative, resolve } = require("node:path");

const ROOT = resolve(__dirname, "../..");

/** The harness modules that start redis-server processes; the check test fails if another one does. */
const REDIS_STARTERS = [
  "test/harness/redis-server.ts",
  "test/harness/redis-cluster.ts",
  "test/harness/redis-sentinel.ts",
  "test/harness/sentinel-group.ts",
  "test/harness/cluster-group.ts",
  // Runs redis-cli --cluster reshard itself (a fault test: npm test never runs it).
  "test/failover/cluster-resharding.test.ts",
];

/** Suites `npm test` never runs: Go/Java interop and the minutes-long fault tests have their own scripts. */
const IGNORED = ["test/interop/**", "test/failover/**", "test/many-locks/**"];

/** Loaded instead of the Redis suites when redis-server is missing: one pending test per suite, saying why. */
const SKIPPED_REPORT = "test/harness/redis-suites-skipped.ts";

// Relative imports and re-exports (group 1 set: type-only, erased at run time, so not followed),
// and dynamic import() of a literal path.
const STATIC_IMPORT = /\b(?:import|export)\s+(type\s+)?(?:[\w$*{},\s]+?\s+from\s*)?["'](\.{1,2}\/[^"'\n]+)["']/g;
const DYNAMIC_IMPORT = /\bimport\s*\(\s*["'](\.{1,2}\/[^"'\n]+)["']\s*\)/g;

/** Every `*.test.ts` under test/ that mocha's spec glob finds, less IGNORED, as sorted repo-relative paths. */
function testFiles() {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!IGNORED.includes(`${path}/**`) && entry.name !== "node_modules") walk(path);
      } else if (entry.name.endsWith(".test.ts")) found.push(path);
    }
  };
  walk("test");
  return found.sort();
}

/** The relative paths `source` imports at run time (type-only imports are erased, so left out). */
function importSpecifiers(source) {
  return [
    ...[...source.matchAll(STATIC_IMPORT)].filter((match) => !match[1]).map((match) => match[2]),
    ...[...source.matchAll(DYNAMIC_IMPORT)].map((match) => match[1]),
  ];
}

/** The repo-relative file a relative import names (`./x.js` is the TypeScript source `./x.ts`), or undefined. */
function resolveImport(from, specifier) {
  const base = join(ROOT, dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, ".ts"), base, `${base}.ts`, join(base, "index.ts")];
  const hit = candidates.find((path) => existsSync(path) && statSync(path).isFile());
  return hit && relative(ROOT, hit).split("\\").join("/");
}

/** A classifier over one snapshot of the tree: each module's imports are read once. */
function makeClassifier() {
  const importsOf = new Map();
  const imports = (file) => {
    if (!importsOf.has(file)) {
      const source = readFileSync(join(ROOT, file), "utf8");
      const found = importSpecifiers(source).map((specifier) => resolveImport(file, specifier));
      importsOf.set(file, [...new Set(found.filter(Boolean))]);
    }
    return importsOf.get(file);
  };
  /** The import chain from `file` to a Redis starter (breadth first: the shortest), or undefined. */
  return function redisChain(file) {
    const parent = new Map([[file, undefined]]);
    const queue = [file];
    while (queue.length > 0) {
      const current = queue.shift();
      if (REDIS_STARTERS.includes(current)) {
        const chain = [];
        for (let at = current; at !== undefined; at = parent.get(at)) chain.unshift(at);
        return chain;
      }
      for (const next of imports(current)) {
        if (parent.has(next)) continue;
        parent.set(next, current);
        queue.push(next);
      }
    }
    return undefined;
  };
}

/**
 * The two groups every test file falls in: `redis` (with the import chain that makes it need
 * Redis) and `pure` (needs no redis-server).
 */
function suiteGroups() {
  const redisChain = makeClassifier();
  const redis = [];
  const pure = [];
  for (const file of testFiles()) {
    const chain = redisChain(file);
    if (chain) redis.push({ file, chain });
    else pure.push(file);
  }
  return { redis, pure };
}

/** What mocha loads without redis-server: every pure suite, and the report of the skipped ones. */
function specWithoutRedis() {
  return [...suiteGroups().pure, SKIPPED_REPORT];
}

module.exports = {
  REDIS_STARTERS,
  IGNORED,
  SKIPPED_REPORT,
  importSpecifiers,
  suiteGroups,
  specWithoutRedis,
};
