import { cpSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { runCommand } from "../harness/run-command.js";

/** One build stage of a Dockerfile, in the order of its instructions. */
export interface DockerStage {
  name: string | undefined;
  workdir: string;
  env: Record<string, string>;
  steps: ({ copy: { from?: string; sources: string[]; dest: string } } | { run: string })[];
  entrypoint: string[];
  cmd: string[];
  healthcheck: string[];
}

/** Joins continuation lines and drops comments: one instruction per entry. */
function instructions(text: string): string[] {
  return text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

/** `KEY=VALUE KEY2=VALUE2` (no quoting: the Dockerfile uses none). */
function envPairs(text: string): [string, string][] {
  return text
    .split(/\s+/)
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq <= 0) throw new Error(`ENV: only KEY=VALUE is understood, got "${pair}"`);
      return [pair.slice(0, eq), pair.slice(eq + 1)];
    });
}

/**
 * The stages of a Dockerfile, with the instructions this project's uses (FROM, WORKDIR, COPY, RUN,
 * ENV, ENTRYPOINT, CMD, HEALTHCHECK in exec form); anything else that would change what runs throws.
 */
export function parseDockerfile(text: string): DockerStage[] {
  const stages: DockerStage[] = [];
  for (const line of instructions(text)) {
    const [, keyword, rest] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    const stage = stages.at(-1);
    if (keyword === "FROM") {
      const name = / AS (\S+)$/i.exec(rest)?.[1];
      const base = stage && stages.find((s) => s.name === rest.split(/\s+/)[0]);
      stages.push({ name, workdir: "/", env: { ...base?.env }, steps: [], entrypoint: [], cmd: [], healthcheck: [] });
    } else if (!stage) {
      if (keyword !== "ARG") throw new Error(`Dockerfile: ${keyword} before FROM`);
    } else if (keyword === "WORKDIR") stage.workdir = rest;
    else if (keyword === "ENV") Object.assign(stage.env, Object.fromEntries(envPairs(rest)));
    else if (keyword === "RUN") stage.steps.push({ run: rest.replace(/--mount=\S+\s+/g, "") });
    else if (keyword === "COPY") {
      const words = rest.split(/\s+/);
      const from = words[0].startsWith("--from=") ? words.shift()!.slice("--from=".length) : undefined;
      if (words.some((w) => w.startsWith("--"))) throw new Error(`COPY: unknown option in "${rest}"`);
      stage.steps.push({ copy: { from, sources: words.slice(0, -1), dest: words.at(-1)! } });
    } else if (keyword === "ENTRYPOINT") stage.entrypoint = JSON.parse(rest);
    else if (keyword === "CMD") stage.cmd = JSON.parse(rest);
    else if (keyword === "HEALTHCHECK") stage.healthcheck = JSON.parse(/\bCMD (\[.*\])$/.exec(rest)?.[1] ?? "[]");
    else if (!["USER", "EXPOSE", "STOPSIGNAL", "LABEL"].includes(keyword))
      throw new Error(`Dockerfile: ${keyword} is not understood by test/package/dockerfile.ts`);
  }
  return stages;
}

/**
 * Builds `stages` as Docker would, without Docker: each stage's WORKDIR is `root`/<stage index>,
 * COPY copies from the build context `context` (or from an earlier stage's directory with --from),
 * RUN runs in a shell with the stage's ENV over `env`. Resolves with each stage's directory.
 */
export async function buildStages(
  stages: DockerStage[],
  context: string,
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<string[]> {
  const dirs: string[] = [];
  for (const [i, stage] of stages.entries()) {
    const dir = join(root, `stage-${i}`);
    mkdirSync(dir, { recursive: true });
    dirs.push(dir);
    for (const step of stage.steps) {
      if ("run" in step) {
        const run = await runCommand("sh", ["-c", step.run], {
          cwd: dir,
          env: { ...env, ...stage.env },
          timeoutMs: 400_000,
        });
        if (run.code !== 0) throw new Error(`RUN ${step.run} failed (${run.code}):\n${run.stdout}\n${run.stderr}`);
        continue;
      }
      const { from, sources, dest } = step.copy;
      const fromStage = from === undefined ? undefined : stages.findIndex((s) => s.name === from);
      for (const source of sources) {
        // --from paths are absolute in that stage's image: under its WORKDIR here.
        const src =
          fromStage === undefined
            ? join(context, source)
            : join(dirs[fromStage], source.replace(new RegExp(`^${stages[fromStage].workdir}/?`), ""));
        const target = dest.endsWith("/") ? join(dir, dest, source.split("/").at(-1)!) : join(dir, dest);
        mkdirSync(dirname(target), { recursive: true });
        cpSync(src, target, { recursive: true });
      }
    }
  }
  return dirs;
}
