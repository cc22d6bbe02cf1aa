import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { processUsage } from "../env/process-usage.js";

const CHILD = fileURLToPath(new URL("./contender-process.mjs", import.meta.url));
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 30_000;

/** A message from a contender process (see contender-process.mjs). */
export interface ChildMessage {
  type: string;
  t?: string;
  message?: string;
  [key: string]: unknown;
}

/**
 * Contender processes running the compiled client under plain node, one per config: forked
 * with an IPC channel, ready once each has connected. Messages go to one or all; `stop` asks each to
 * close its clients and collects the last message it sent (its result), killing one that does not end.
 */
export class ContenderProcesses {
  private constructor(readonly children: ChildProcess[]) {}

  /** Forks one process per config (plain node: not the bench's tsx loader) and waits until all are ready. */
  static async start(configs: object[]): Promise<ContenderProcesses> {
    const children = configs.map((c) =>
      fork(CHILD, [JSON.stringify(c)], { execArgv: [], stdio: ["ignore", "ignore", "pipe", "ipc"] }),
    );
    const fleet = new ContenderProcesses(children);
    try {
      await Promise.all(children.map((child) => readyOf(child)));
    } catch (err) {
      for (const child of children) child.kill("SIGKILL");
      throw err;
    }
    return fleet;
  }

  /** Calls `handler` with the index of the process and each message it sends. */
  onMessage(handler: (index: number, message: ChildMessage) => void): void {
    for (const [i, child] of this.children.entries()) child.on("message", (m: ChildMessage) => handler(i, m));
  }

  send(index: number, message: object): void {
    const child = this.children[index];
    if (child.connected) child.send(message);
  }

  broadcast(message: object): void {
    for (let i = 0; i < this.children.length; i++) this.send(i, message);
  }

  /** CPU seconds each process has used so far (/proc). */
  cpuSeconds(): number[] {
    return this.children.map((c) => (c.pid ? (processUsage(c.pid)?.cpuSeconds ?? 0) : 0));
  }

  /** Says "stop" to every process and resolves with the last message each sent before it ended. */
  async stop(): Promise<(ChildMessage | undefined)[]> {
    return Promise.all(
      this.children.map(async (child) => {
        let last: ChildMessage | undefined;
        child.on("message", (m: ChildMessage) => {
          last = m;
        });
        if (child.exitCode !== null || child.signalCode !== null) return last;
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        if (child.connected) child.send({ type: "stop" });
        const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
        return last;
      }),
    );
  }
}

function readyOf(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    const timer = setTimeout(() => fail(new Error("a contender process was not ready within 30 s")), READY_TIMEOUT_MS);
    const onMessage = (m: ChildMessage) => {
      if (m.type !== "ready") return;
      clear();
      resolve();
    };
    const onExit = (code: number | null) => fail(new Error(`a contender process exited (${code}): ${stderr}`));
    const clear = () => {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
    };
    const fail = (err: Error) => {
      clear();
      reject(err);
    };
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
}
