import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { CutDirection } from "./partition-proxy.js";

const HOST = fileURLToPath(new URL("./partition-host.ts", import.meta.url));

/** A PartitionProxy in the network's process. */
export interface NetworkProxy {
  /** "127.0.0.1:PORT", to give the processes that should go through it. */
  readonly address: string;
  readonly port: number;
  /** Cuts the connections the processes `from` open (every one with "all"); resolves once in place. */
  cut(from: Iterable<number> | "all", direction?: CutDirection): Promise<NetworkCut>;
}

/** A cut in place; `restore()` lifts it. */
export interface NetworkCut {
  restore(): Promise<void>;
}

/**
 * The links of a fault test: PartitionProxies (see partition-proxy.ts) in one process of their own
 * (partition-host.ts), started by `proxy(target)` and cut per process, so that forwarding never
 * waits on the test's own bookkeeping.
 */
export class PartitionNetwork {
  readonly #host: ChildProcess;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #nextId = 1;

  private constructor(host: ChildProcess) {
    this.#host = host;
    host.on("message", (m: { id?: number; result?: unknown; error?: string }) => {
      const waiter = m.id === undefined ? undefined : this.#pending.get(m.id);
      if (!waiter || m.id === undefined) return;
      this.#pending.delete(m.id);
      if (m.error) waiter.reject(new Error(`partition host: ${m.error}`));
      else waiter.resolve(m.result);
    });
  }

  /** Forks the network's process and resolves once it is ready. */
  static async start(): Promise<PartitionNetwork> {
    const host = fork(HOST, [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
    await once(host, "message");
    return new PartitionNetwork(host);
  }

  /** Starts a proxy to `target` ("host:port"). */
  async proxy(target: string): Promise<NetworkProxy> {
    const port = (await this.#call({ op: "proxy", target })) as number;
    return {
      address: `127.0.0.1:${port}`,
      port,
      cut: async (from, direction = "both") => {
        const cut = await this.#call({ op: "cut", port, from: from === "all" ? "all" : [...from], direction });
        return { restore: async () => void (await this.#call({ op: "restore", cut })) };
      },
    };
  }

  /** Ends the network's process, and with it every proxy and connection. */
  async stop(): Promise<void> {
    if (this.#host.exitCode !== null || this.#host.signalCode !== null) return;
    const exited = once(this.#host, "exit");
    this.#host.kill("SIGKILL");
    await exited;
  }

  #call(request: object): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#host.send({ id, ...request });
    });
  }
}
