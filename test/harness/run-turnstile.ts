import { type ChildProcess, spawn } from "node:child_process";
import { constants } from "node:os";
import { fileURLToPath } from "node:url";

/** The `turnstile` command line from source (through tsx), so the tests never run a stale dist/ (nor build it). */
export const TURNSTILE = [
  process.execPath,
  "--import",
  "tsx",
  fileURLToPath(new URL("../../bin/turnstile-cli.ts", import.meta.url)),
];

/** How a `turnstile` run ended: exit code (128+N for signal N), its output, and how long it took. */
export interface TurnstileRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** A running `turnstile` process and the promise of how it ended. */
export interface TurnstileProcess {
  child: ChildProcess;
  done: Promise<TurnstileRun>;
}

/**
 * Starts `turnstile ARGS...` with `env` added to this process's environment; `done` rejects if it
 * has not ended after `timeoutMs` (and kills it).
 */
export function spawnTurnstile(
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): TurnstileProcess {
  const started = Date.now();
  const child = spawn(TURNSTILE[0], [...TURNSTILE.slice(1), ...args], {
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const done = new Promise<TurnstileRun>((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? 15_000;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`turnstile ${args.join(" ")} still running after ${timeoutMs} ms; stderr:\n${stderr}`));
    }, timeoutMs);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      const status = code ?? 128 + (signal ? constants.signals[signal] : 0);
      resolve({ code: status, stdout, stderr, ms: Date.now() - started });
    });
  });
  return { child, done };
}

/** Runs `turnstile ARGS...` to completion (see `spawnTurnstile`). */
export function runTurnstile(
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<TurnstileRun> {
  return spawnTurnstile(args, options).done;
}
