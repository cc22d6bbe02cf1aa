import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";

/** A started `turnstile serve`: the process and everything it wrote so far (stdout and stderr). */
export interface ServeOutput {
  child: ChildProcess;
  text(): string;
}

/** Collects a spawned process's stdout and stderr from now on. */
export function collectOutput(child: ChildProcess): ServeOutput {
  let text = "";
  const add = (d: Buffer) => {
    text += d.toString();
  };
  child.stdout?.on("data", add);
  child.stderr?.on("data", add);
  return { child, text: () => text };
}

/**
 * Resolves with the pid and port of the coordinator's JSON "listening" log line; rejects if the
 * process exits first or `timeoutMs` passes. Listeners and the timer are removed either way.
 */
export function listening(serve: ServeOutput, timeoutMs: number): Promise<{ pid: number; port: number }> {
  const { child } = serve;
  return new Promise((resolve, reject) => {
    const check = () => {
      const line = serve
        .text()
        .split("\n")
        .slice(0, -1)
        .find((l) => l.includes('"msg":"listening"'));
      if (!line) return;
      const { pid, port } = JSON.parse(line) as { pid: number; port: number };
      finish(() => resolve({ pid, port }));
    };
    const onExit = (code: number | null) => finish(() => reject(new Error(`exited (${code}):\n${serve.text()}`)));
    const timer = setTimeout(
      () => finish(() => reject(new Error(`not listening after ${timeoutMs} ms:\n${serve.text()}`))),
      timeoutMs,
    );
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      child.stdout?.off("data", check);
      child.off("exit", onExit);
      settle();
    };
    child.stdout?.on("data", check);
    child.once("exit", onExit);
    check();
  });
}

/** Resolves when `event` ('exit' or 'close') comes; rejects after `timeoutMs`. */
export function ended(serve: ServeOutput, event: "exit" | "close", timeoutMs: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const onEnd = (code: number | null) => {
      clearTimeout(timer);
      resolve(code);
    };
    const timer = setTimeout(() => {
      serve.child.off(event, onEnd);
      reject(new Error(`no '${event}' within ${timeoutMs} ms:\n${serve.text()}`));
    }, timeoutMs);
    serve.child.once(event, onEnd);
  });
}

/** Whether `pid` is a live process; an exited one not yet reaped (a zombie, here under PID 1) is not. */
export function isRunning(pid: number): boolean {
  if (!existsSync("/proc")) {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
