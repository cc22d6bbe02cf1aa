import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { expect } from "chai";
import { SCRIPTS, SCRIPTS_VERSION, type ScriptName } from "../../../server/store/redis/scripts/runner/lock-scripts.js";
import { expandIncludes, scriptSource } from "../../../server/store/redis/scripts/runner/script-source.js";
import {
  acquire,
  check,
  describeLock,
  keys,
  proclaim,
  release,
  renew,
  requestRelease,
  revoke,
  transfer,
  useScripts,
} from "./script-fixture.js";
import { acquireSet } from "./set-fixture.js";

const DIR = new URL("../../../server/store/redis/scripts/", import.meta.url);
const NAMES = Object.keys(SCRIPTS) as ScriptName[];
const INCLUDES = readdirSync(new URL("includes/", DIR)).map((f) => f.replace(/\.lua$/, ""));
const raw = (path: string) => readFileSync(new URL(path, DIR), "utf8");
const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");

/** An include reader over a fixed map, for the expander's own tests. */
const from = (files: Record<string, string>) => (name: string) => files[name];

describe("expandIncludes()", () => {
  it("replaces a directive line with the include's text, in place", () => {
    const out = expandIncludes("s", 'local a = 1\n--- @include "b"\nreturn a\n', from({ b: "a = a + 1\n" }));
    expect(out).to.equal("local a = 1\na = a + 1\nreturn a\n");
  });

  it("expands an include's own includes first, and each include once per script", () => {
    const files = { top: '--- @include "base"\ntop()\n', base: "base()\n" };
    const out = expandIncludes("s", '--- @include "base"\n--- @include "top"\nrun()\n', from(files));
    expect(out).to.equal("base()\ntop()\nrun()\n");
  });

  it("leaves a script without directives as it is", () => {
    expect(expandIncludes("s", "-- @include is prose here\nreturn 1\n", from({}))).to.equal(
      "-- @include is prose here\nreturn 1\n",
    );
  });

  it("rejects a missing include, naming the script, the line and the include", () => {
    expect(() => expandIncludes("s", 'x()\n--- @include "nope"\n', from({}))).to.throw(
      's.lua line 2: include "nope" not found (includes/nope.lua)',
    );
  });

  it("rejects an include cycle, naming the chain", () => {
    const files = { a: '--- @include "b"\n', b: '--- @include "a"\n' };
    expect(() => expandIncludes("s", '--- @include "a"\n', from(files))).to.throw(
      "includes/b.lua line 1: include cycle: a → b → a",
    );
  });

  it("rejects a malformed directive instead of leaving it unexpanded", () => {
    for (const line of ["--- @include purge", '--- @include "../x"', '--- @include "a" extra']) {
      expect(() => expandIncludes("s", `${line}\n`, from({ a: "" }))).to.throw(/s\.lua line 1: malformed include/);
    }
  });
});

describe("the Lua scripts and their includes", () => {
  it("expand with no directive left, and every include is used by some script", () => {
    const expanded = NAMES.map((name) => scriptSource(name));
    for (const text of expanded) expect(text).not.to.match(/@include/);
    for (const include of INCLUDES) {
      expect(
        NAMES.filter((n) => expanded[NAMES.indexOf(n)].includes(firstLine(include))),
        include,
      ).not.to.be.empty;
    }
  });

  it("keep every top-level script within 60 lines and every include within 50", () => {
    for (const name of NAMES) expect(lines(raw(`${name}.lua`)), `${name}.lua`).to.have.length.at.most(60);
    for (const name of INCLUDES) expect(lines(raw(`includes/${name}.lua`)), name).to.have.length.at.most(50);
  });

  it("write one statement per line, none longer than 110 characters", () => {
    for (const path of [...NAMES.map((n) => `${n}.lua`), ...INCLUDES.map((n) => `includes/${n}.lua`)]) {
      lines(raw(path)).forEach((line, i) => {
        const where = `${path}:${i + 1}: ${line}`;
        expect(line.length, where).to.be.at.most(110);
        if (line.trimStart().startsWith("--")) return;
        expect(line, where).not.to.include(";");
        expect(line, where).not.to.match(/\b(then|do|else)\s+\S/);
        expect(line, where).not.to.match(/\bend\s+[^\s)]/);
      });
    }
  });

  it("name no variable, parameter or loop variable with one letter", () => {
    const declared =
      /\blocal\s+(?:function\s+\w+\s*\(([^)]*)\)|([\w\s,]+?)\s*(?:=|$))|\bfor\s+([\w\s,]+?)\s+(?:=|in\b)|\bfunction\s*\w*\s*\(([^)]*)\)/g;
    for (const path of [...NAMES.map((n) => `${n}.lua`), ...INCLUDES.map((n) => `includes/${n}.lua`)]) {
      lines(raw(path)).forEach((line, i) => {
        if (line.trimStart().startsWith("--")) return;
        const names = [...line.matchAll(declared)].flatMap((m) => m.slice(1).filter(Boolean).join(",").split(","));
        const short = names.map((n) => n.trim()).filter((n) => n.length === 1 && n !== "_");
        expect(short, `${path}:${i + 1}: ${line}`).to.deep.equal([]);
      });
    }
  });

  it("open each script with its contract, KEYS numbered as many as its definition's numberOfKeys", () => {
    for (const name of NAMES) {
      const header = lines(raw(`${name}.lua`)).filter((l) => l.startsWith("--"));
      const text = header.join("\n");
      expect(header[0], name).to.match(new RegExp(`^-- ${name}: `));
      for (const part of ["KEYS:", "ARGV:", "Returns"]) expect(text, `${name}: ${part}`).to.include(part);
      const keyLine = header.find((l) => l.startsWith("-- KEYS:")) ?? "";
      const numbered = [...keyLine.matchAll(/\b(\d) [a-z]/g)].map((m) => Number(m[1]));
      expect(numbered, name).to.deep.equal([...Array(SCRIPTS[name].numberOfKeys).keys()].map((i) => i + 1));
    }
  });

  it("open each include with its contract: what it expects in scope and what it defines", () => {
    for (const name of INCLUDES) {
      const text = raw(`includes/${name}.lua`);
      expect(text, name).to.match(new RegExp(`^-- ${name}: `));
      expect(text, name).to.include("-- Expects in scope:");
      expect(text, name).to.include("-- Defines:");
    }
  });
});

describe("the scripts' version", () => {
  it("is the one docs/operations.md (Upgrading) and docs/data-model.md name as current", () => {
    const operations = readFileSync(new URL("../../../docs/operations.md", import.meta.url), "utf8");
    const dataModel = readFileSync(new URL("../../../docs/data-model.md", import.meta.url), "utf8");
    expect(operations).to.include(`the current\nversion is ${SCRIPTS_VERSION} `);
    expect(dataModel).to.include(`**Script version ${SCRIPTS_VERSION}`);
  });
});

describe("the expanded scripts in Redis", () => {
  const f = useScripts();

  it("are loaded under the SHA1 of the expanded text (SCRIPT LOAD answers it)", async () => {
    for (const name of NAMES) {
      expect(await f.redis.script("LOAD", scriptSource(name)), name).to.equal(sha1(scriptSource(name)));
    }
  });

  it("are what LockScripts runs: after each ran once on an empty script cache, SCRIPT EXISTS knows every SHA1", async () => {
    await f.redis.script("FLUSH");
    const shas = NAMES.map((name) => sha1(scriptSource(name)));
    expect(await f.redis.script("EXISTS", ...shas)).to.deep.equal(NAMES.map(() => 0));
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2" });
    await renew(f, "a", "s1", 30_000, ["o"], []);
    await proclaim(f, "a", { session: "s1", value: "v" });
    await check(f, "a", "c1", [["s2:r", "s2:o"]]);
    await describeLock(f, "a");
    await acquireSet(f, ["b", "c"], { session: "s3" });
    await revoke(f, "a", { session: "s1" });
    await release(f, "a", { session: "s2" });
    const tokenArgs = ["c1", 60_000, "a", "t:grants:", keys("a").events, "watched", "0 0", "s2", "o", "2"];
    await f.scripts.run("release-token", keys("a").all, tokenArgs);
    await transfer(f, "a", { session: "s1", token: "1" });
    await requestRelease(f, "a", { requester: "operator", reason: "" });
    expect(await f.redis.script("EXISTS", ...shas)).to.deep.equal(NAMES.map(() => 1));
  });

  it("are sent in full again on a connection whose server lost them (NOSCRIPT after SCRIPT FLUSH)", async () => {
    const calls = async (command: string) =>
      Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, "m").exec(await f.redis.info("commandstats"))?.[1] ?? 0);
    await acquire(f, "a", { session: "s1" }); // sent (in full or by SHA1) on this connection: known here
    await f.redis.script("FLUSH");
    const [evalsBefore, shasBefore] = [await calls("eval"), await calls("evalsha")];
    expect(await acquire(f, "a", { session: "s2", mayWait: false })).to.deep.equal([3]); // BUSY: it ran
    // One EVALSHA answered NOSCRIPT, then the same command with the text; the next goes by SHA1 again.
    expect([(await calls("eval")) - evalsBefore, (await calls("evalsha")) - shasBefore]).to.deep.equal([1, 1]);
    await acquire(f, "a", { session: "s3", mayWait: false });
    expect([(await calls("eval")) - evalsBefore, (await calls("evalsha")) - shasBefore]).to.deep.equal([1, 2]);
  });

  it("run by EVALSHA of the expanded text's SHA1, with the definition's key count", async () => {
    const k = keys("a");
    const describeKeys = [k.holders, k.data, k.queue, k.leases, k.version];
    await f.redis.script("LOAD", scriptSource("describe"));
    const reply = await f.redis.evalsha(sha1(scriptSource("describe")), SCRIPTS.describe.numberOfKeys, ...describeKeys);
    expect(reply).to.deep.equal(["0", "", [], [], -1]);
  });
});

function lines(text: string): string[] {
  return text.replace(/\n$/, "").split("\n");
}

/** An include's first line (its header's summary), which its expansion carries. */
function firstLine(include: string): string {
  return lines(raw(`includes/${include}.lua`))[0];
}
