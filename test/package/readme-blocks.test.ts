import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { cleanEnv, runCommand } from "../harness/run-command.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { installedPackage, ROOT } from "./installed-package.js";

// Every README code block meant to run (sh, js, ts) runs here as written, on the Node running the
// tests (CI: Node 20), ts blocks as plain .mjs without any transpiler, in a project that installed
// the packed tarball (as a user would: its import and its `turnstile` command), against a real
// coordinator on a real redis-server. The conventions are stated in the README: a block whose first line says
// "not run by the README test" (and why) is skipped; the placeholders below are no-ops; the example
// addresses are the test's coordinators; a block using `client` without making one gets one.

const MARK = /^(#|\/\/) not run by the README test: \S/;
const PLACEHOLDERS = ["writeToStorage", "runReport", "train", "save", "log"];

interface Block {
  lang: string;
  line: number;
  code: string;
}

function readmeBlocks(): Block[] {
  const text = readFileSync(join(ROOT, "README.md"), "utf8");
  const blocks: Block[] = [];
  for (const match of text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)) {
    const line = text.slice(0, match.index).split("\n").length;
    blocks.push({ lang: match[1], line, code: match[2] });
  }
  return blocks;
}

const blocks = readmeBlocks();
const runnable = blocks.filter((b) => ["sh", "js", "mjs", "ts"].includes(b.lang) && !MARK.test(b.code));
// The module the README itself imports TurnstileClient from: a block that uses one without importing gets it.
const CLIENT_MODULE = /import \{ TurnstileClient \} from "([^"]+)";/.exec(
  readFileSync(join(ROOT, "README.md"), "utf8"),
)?.[1];

/** A ts/js block as a runnable .mjs: placeholders, addresses, and a `client` when it uses one it does not make. */
function moduleOf(block: Block, addresses: string[]): string {
  let code = block.code
    .replaceAll('"127.0.0.1:7420"', JSON.stringify(addresses[0]))
    .replaceAll('"coord-a:7420"', JSON.stringify(addresses[0]))
    .replaceAll('"coord-b:7420"', JSON.stringify(addresses[1]));
  const prelude = PLACEHOLDERS.map((name) =>
    name === "log" ? "const log = { warn() {}, error() {}, info() {} };" : `const ${name} = async () => {};`,
  );
  const makesClient = /\bconst client\b/.test(code);
  const usesClient = !makesClient && /\bclient\./.test(code);
  if ((usesClient || /\bnew TurnstileClient\b/.test(code)) && !/import \{[^}]*\bTurnstileClient\b/.test(code))
    prelude.unshift(`import { TurnstileClient } from "${CLIENT_MODULE}";`);
  if (usesClient) {
    prelude.push(`const client = new TurnstileClient(${JSON.stringify(addresses[0])});`);
    code += "\nawait client.close();\n";
  }
  // Imports first: the prelude's import goes before the block's own code, after its imports.
  const imports = code.match(/^import .*;$/gm) ?? [];
  const body = code.replace(/^import .*;$/gm, "");
  const [preludeImports, preludeRest] = [
    prelude.filter((l) => l.startsWith("import")),
    prelude.filter((l) => !l.startsWith("import")),
  ];
  return [...imports, ...preludeImports, ...preludeRest, body].join("\n");
}

describe("the README's code blocks, run as written", () => {
  let redis: TestRedis;
  let coordinators: TestCoordinator[];
  let dir: string;
  let bin: string;

  before(async function () {
    this.timeout(420_000);
    const pkg = await installedPackage();
    redis = await startRedis();
    coordinators = [await startCoordinator(redis.url), await startCoordinator(redis.url)];
    dir = pkg.project;
    bin = join(pkg.project, "node_modules/.bin");
  });
  after(async () => {
    for (const c of coordinators ?? []) await c.stop();
    await redis?.stop();
  });

  it("marks every block it does not run, saying why, and runs the rest (js/ts as .mjs, sh with set -e)", () => {
    const skipped = blocks.filter((b) => ["sh", "js", "mjs", "ts"].includes(b.lang) && MARK.test(b.code));
    console.log(`    README: ${runnable.length} blocks run, ${skipped.length} marked not run`);
    expect(runnable.length).to.be.above(3);
    const unknown = blocks.filter((b) => !["", "sh", "js", "mjs", "ts", "json", "ini"].includes(b.lang));
    expect(unknown.map((b) => `line ${b.line}: ${b.lang}`)).to.deep.equal([]);
  });

  for (const block of runnable) {
    it(`runs the ${block.lang} block at README.md line ${block.line}`, async function () {
      this.timeout(60_000);
      const addresses = coordinators.map((c) => c.address);
      const env = { ...cleanEnv(), PATH: `${bin}:${process.env.PATH}`, TURNSTILE_SERVER: addresses[0] };
      let run: Awaited<ReturnType<typeof runCommand>>;
      if (block.lang === "sh") {
        // Outside the repository: a shell block never reaches this clone's package.json or node_modules.
        run = await runCommand("sh", ["-ec", block.code], { cwd: tmpdir(), env, timeoutMs: 50_000 });
      } else {
        const file = join(dir, `readme-block-${block.line}.mjs`);
        writeFileSync(file, moduleOf(block, addresses));
        run = await runCommand(process.execPath, [file], { cwd: dir, env, timeoutMs: 50_000 });
      }
      expect(run.code, `${run.stdout}\n${run.stderr}`).to.equal(0);
    });
  }
});
