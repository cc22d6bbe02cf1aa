import { spawn } from "node:child_process";

/** How a command ended: its exit code (null if a signal ended it) and its output. */
export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command ARGS...` in `cwd` with exactly `env` and resolves when it ends, whatever its exit
 * code; rejects (after SIGKILLing it) if it has not ended within `timeoutMs`.
 */
export function runCommand(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} ${args.join(" ")} still running after ${options.timeoutMs} ms; stderr:\n${stderr}`));
    }, options.timeoutMs);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** This process's environment without npm's script variables, NODE_OPTIONS and TURNSTILE_* settings. */
export function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(npm_|TURNSTILE_)/i.test(k) && k !== "NODE_OPTIONS"),
  );
}
