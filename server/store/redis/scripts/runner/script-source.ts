import { readFileSync } from "node:fs";

/** Reads one include's text by name (`purge` → scripts/includes/purge.lua); undefined when there is none. */
export type IncludeReader = (name: string) => string | undefined;

/** A whole line `--- @include "name"`; its leading spaces are allowed, anything after it is not. */
const DIRECTIVE = /^\s*---\s*@include\b(.*)$/;
const ARGUMENT = /^\s+"([a-z][a-z0-9-]*)"\s*$/;

/**
 * Expands the include directives of one Lua script (BullMQ's model): each line `--- @include "name"`
 * is replaced by the text of include `name`, whose own directives are expanded first. An include
 * already expanded into this script expands to nothing the second time, so an include may name what
 * it needs without doubling a `local`. Throws naming the script, line and include on a missing include,
 * a malformed directive or a cycle.
 */
export function expandIncludes(script: string, text: string, readInclude: IncludeReader): string {
  const done = new Set<string>();
  const expand = (file: string, source: string, stack: string[]): string => {
    const lines = source.replace(/\n$/, "").split("\n");
    return lines
      .flatMap((line, i) => {
        const directive = DIRECTIVE.exec(line);
        if (!directive) return [line];
        const where = `${file} line ${i + 1}`;
        const name = ARGUMENT.exec(directive[1])?.[1];
        if (name === undefined) {
          throw new Error(`${where}: malformed include directive (expected --- @include "name"): ${line.trim()}`);
        }
        if (stack.includes(name)) {
          throw new Error(`${where}: include cycle: ${[...stack, name].join(" → ")}`);
        }
        if (done.has(name)) return [];
        const included = readInclude(name);
        if (included === undefined) throw new Error(`${where}: include "${name}" not found (includes/${name}.lua)`);
        done.add(name);
        return [expand(`includes/${name}.lua`, included, [...stack, name])];
      })
      .join("\n");
  };
  return `${expand(`${script}.lua`, text, [])}\n`;
}

const SCRIPTS = new URL("../", import.meta.url);

/** Reads an include from scripts/includes/ (the folder above this module) (in dist/ too: the build copies them). */
const readInclude: IncludeReader = (name) => {
  try {
    return readFileSync(new URL(`includes/${name}.lua`, SCRIPTS), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
};

// The files never change while the process runs; a LockScripts made later (one per Cluster master) reads none.
const sources = new Map<string, string>();

/** The text Redis runs for script `name`: scripts/<name>.lua with its includes expanded (read once). */
export function scriptSource(name: string): string {
  let source = sources.get(name);
  if (source === undefined) {
    source = expandIncludes(name, readFileSync(new URL(`${name}.lua`, SCRIPTS), "utf8"), readInclude);
    sources.set(name, source);
  }
  return source;
}
