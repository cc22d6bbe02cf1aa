import { once } from "node:events";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { socketOwners } from "./socket-owner.js";

/** Which way a cut stops bytes: toward the proxy's target, back from it, or both. */
export type CutDirection = "both" | "to-target" | "from-target";

/** One active cut; `restore()` lifts it (bytes held meanwhile then flow, as TCP retransmits them). */
export interface Cut {
  readonly from: ReadonlySet<number> | "all";
  readonly direction: CutDirection;
  restore(): void;
}

interface Link {
  client: Socket;
  upstream?: Socket;
  /** The process that connected, once a cut asked (undefined: none of the processes asked about). */
  owner?: number;
  /** Held until a lookup says whose it is (it opened while a cut of chosen processes was active). */
  pending: boolean;
  /** A close of one end seen while its direction was cut, delivered on restore. */
  closed: { client: boolean; upstream: boolean };
}

/**
 * A TCP proxy on a free loopback port to `target` that can cut the links of chosen processes, for
 * partitions in fault tests without root (no iptables). `cut(from, direction)` finds which
 * connections the processes in `from` opened (`socketOwners`: /proc) and stops reading them (every
 * connection with "all") in that direction: the bytes wait in the kernel's buffers and the senders'
 * sockets fill up, nothing is dropped, no FIN or reset passes (a close is held too), and a
 * connection they open meanwhile reaches the target only on restore — to both ends, a cable cut.
 * `restore()` lets everything held flow, in order, as TCP would after a short partition. Several
 * cuts may be active at once. Connections are attributed only when a cut asks, so an uncut proxy
 * costs a hop and nothing more.
 */
export class PartitionProxy {
  readonly #server: Server;
  readonly #target: { host: string; port: number };
  readonly #links = new Set<Link>();
  readonly #cuts = new Set<Cut>();
  address = "";
  port = 0;

  private constructor(target: string) {
    const colon = target.lastIndexOf(":");
    this.#target = { host: target.slice(0, colon), port: Number(target.slice(colon + 1)) };
    this.#server = createServer({ pauseOnConnect: true }, (client) => this.#accept(client));
  }

  /** Starts a proxy to `target` ("host:port") and resolves once it listens. */
  static async start(target: string): Promise<PartitionProxy> {
    const proxy = new PartitionProxy(target);
    proxy.#server.listen(0, "127.0.0.1");
    await once(proxy.#server, "listening");
    const bound = proxy.#server.address();
    proxy.port = typeof bound === "object" && bound ? bound.port : 0;
    proxy.address = `127.0.0.1:${proxy.port}`;
    return proxy;
  }

  /**
   * Cuts the connections of the processes in `from` (every connection with "all"), those open now
   * and those they open until restored; resolves once it is in place.
   */
  async cut(from: ReadonlySet<number> | "all", direction: CutDirection = "both"): Promise<Cut> {
    if (from !== "all")
      await this.#attribute(
        [...this.#links].filter((l) => l.owner === undefined),
        from,
      );
    const cut: Cut = {
      from,
      direction,
      restore: () => {
        if (this.#cuts.delete(cut)) for (const link of this.#links) this.#apply(link);
      },
    };
    this.#cuts.add(cut);
    for (const link of this.#links) this.#apply(link);
    return cut;
  }

  /** Closes the listener and destroys every connection. */
  async stop(): Promise<void> {
    this.#cuts.clear();
    for (const link of this.#links) {
      link.client.destroy();
      link.upstream?.destroy();
    }
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Sets the owner of each of `links` that one of `pids` opened. */
  async #attribute(links: Link[], pids: Iterable<number>): Promise<void> {
    const byPort = new Map(links.map((l) => [l.client.remotePort ?? 0, l]));
    const owners = await socketOwners(byPort.keys(), this.port, pids).catch(() => new Map<number, number>());
    for (const [port, pid] of owners) {
      const link = byPort.get(port);
      if (link) link.owner = pid;
    }
  }

  #accept(client: Socket): void {
    const link: Link = { client, pending: false, closed: { client: false, upstream: false } };
    this.#links.add(link);
    client.on("error", () => {});
    client.on("data", (chunk) => link.upstream?.write(chunk));
    client.on("end", () => link.upstream?.end());
    client.on("close", () => {
      link.closed.client = true;
      this.#apply(link);
    });
    // While chosen processes are cut off, a new connection waits until it is known whose it is.
    const cutPids = [...this.#cuts].flatMap((c) => (c.from === "all" ? [] : [...c.from]));
    if (cutPids.length > 0) {
      link.pending = true;
      void this.#attribute([link], cutPids).finally(() => {
        link.pending = false;
        this.#apply(link);
      });
    }
    this.#apply(link);
  }

  #blocked(link: Link, direction: "to-target" | "from-target"): boolean {
    if (link.pending) return true;
    for (const cut of this.#cuts) {
      if (cut.direction !== "both" && cut.direction !== direction) continue;
      if (cut.from === "all" || (link.owner !== undefined && cut.from.has(link.owner))) return true;
    }
    return false;
  }

  /** Pauses or resumes each end of `link` by the active cuts; opens its upstream once it may. */
  #apply(link: Link): void {
    const up = this.#blocked(link, "to-target");
    const down = this.#blocked(link, "from-target");
    if (!link.upstream && !up && !link.closed.client) {
      const upstream = createConnection(this.#target);
      link.upstream = upstream;
      upstream.on("data", (chunk) => link.client.write(chunk));
      upstream.on("end", () => link.client.end());
      upstream.on("error", () => {});
      upstream.on("close", () => {
        link.closed.upstream = true;
        this.#apply(link);
      });
    }
    // A close travels like the bytes before it: held while its direction is cut.
    if (link.closed.client && !up) link.upstream?.destroy();
    if (link.closed.upstream && !down) link.client.destroy();
    if (link.closed.client && (link.closed.upstream || !link.upstream)) this.#links.delete(link);
    if (up) link.client.pause();
    else link.client.resume();
    if (down) link.upstream?.pause();
    else link.upstream?.resume();
  }
}
