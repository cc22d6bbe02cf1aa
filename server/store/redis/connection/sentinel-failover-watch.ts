import { Redis, type RedisOptions } from "ioredis";
import { reconnectDelayMs } from "./reconnect-delay.js";
import type { HostPort } from "./redis-connection.js";

/**
 * The events a Sentinel publishes while it fails over a master, up to and including the promotion
 * and the reconfiguration of the other replicas. The leader announces the failover (`+try-failover`,
 * `+failover-state-send-slaveof-noone`) before it sends SLAVEOF NO ONE to the replica it promotes.
 * Each message names the master: `master NAME IP PORT ...` or `TYPE ID IP PORT @ NAME IP PORT`
 * (a voter's `+vote-for-leader` names none, so it is not among them).
 */
const FAILOVER_STARTED = [
  "+try-failover",
  "+elected-leader",
  "+failover-state-select-slave",
  "+selected-slave",
  "+failover-state-send-slaveof-noone",
  "+failover-state-wait-promotion",
  "+promoted-slave",
  "+failover-state-reconf-slaves",
  "+slave-reconf-sent",
  "+slave-reconf-inprog",
] as const;
/** The switch is announced by every Sentinel: `NAME OLD-IP OLD-PORT NEW-IP NEW-PORT`. */
const SWITCHED = "+switch-master";
/** `-failover-abort-not-elected`, `-failover-abort-no-good-slave`, `-failover-abort-slave-timeout`. */
const ABORTED = "-failover-abort-*";
/** How often each link proves it is alive, and how long a PING may take before the link counts as cut. */
const PING_EVERY_MS = 500;
const PING_TIMEOUT_MS = 1000;

/** What a SentinelFailoverWatch tells its owner. */
export interface FailoverWatchHooks {
  /** A Sentinel announced a failover of the watched master: no write to it may be told from now on. */
  started(event: string): void;
  /** A Sentinel named a new master, or gave up a failover: the writer may re-learn where it is. */
  settled(event: string): void;
  /** The number of Sentinels heard (subscribed, and answering PING) changed. */
  heard(live: number): void;
}

interface Link {
  client: Redis;
  live: boolean;
  ping?: NodeJS.Timeout;
}

/**
 * Listens to every Sentinel's failover events for one master on a subscribed connection of its own
 * (reconnected with backoff), so that the store stops telling grants of a master the moment any
 * Sentinel announces that it is being replaced: a planned failover promotes a replica before it
 * demotes the old master, and the old master's other replica acknowledges writes in between that the
 * new master never gets (docs/operations.md). Each link PINGs every 500 ms; one that does not answer
 * within 1 s counts as cut until it answers again, and `heard` reports how many are live, so that a
 * coordinator cut off from every Sentinel stops telling grants too.
 */
export class SentinelFailoverWatch {
  private readonly links: Link[];
  private closed = false;

  constructor(
    sentinels: HostPort[],
    private readonly masterName: string,
    options: RedisOptions,
    private readonly hooks: FailoverWatchHooks,
  ) {
    this.links = sentinels.map((at) => this.open(at, options));
  }

  /** Sentinels heard now: subscribed and answering. */
  get live(): number {
    return this.links.filter((l) => l.live).length;
  }

  /** Closes every link. */
  close(): void {
    this.closed = true;
    for (const link of this.links) {
      clearInterval(link.ping);
      link.client.disconnect();
    }
  }

  private open(at: HostPort, options: RedisOptions): Link {
    const client = new Redis({
      ...options,
      ...at,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: PING_TIMEOUT_MS,
      retryStrategy: reconnectDelayMs,
      // A Sentinel that stopped answering holds no FIN back: drop its socket at once on reconnect.
      disconnectTimeout: 100,
    });
    const link: Link = { client, live: false };
    client.on("error", () => {});
    client.on("close", () => this.setLive(link, false));
    client.on("ready", () => {
      // ioredis re-subscribes on reconnect; the link counts once its subscriptions answered.
      Promise.all([client.subscribe(...FAILOVER_STARTED, SWITCHED), client.psubscribe(ABORTED)])
        .then(() => this.setLive(link, true))
        .catch(() => {});
    });
    client.on("message", (channel: string, message: string) => this.onEvent(channel, message));
    client.on("pmessage", (_pattern: string, channel: string, message: string) => this.onEvent(channel, message));
    link.ping = setInterval(() => this.ping(link), PING_EVERY_MS).unref();
    client.connect().catch(() => {});
    return link;
  }

  private ping(link: Link): void {
    if (link.client.status !== "ready" || this.closed) return;
    let answered = false;
    const timer = setTimeout(() => {
      // A blackholed or frozen Sentinel: not heard until it answers again.
      if (!answered) this.setLive(link, false);
    }, PING_TIMEOUT_MS);
    link.client
      .ping()
      .then(() => {
        answered = true;
        if (link.client.status === "ready") this.setLive(link, true);
      })
      .catch(() => {})
      .finally(() => clearTimeout(timer));
  }

  private setLive(link: Link, live: boolean): void {
    if (link.live === live || this.closed) return;
    link.live = live;
    this.hooks.heard(this.live);
  }

  private onEvent(channel: string, message: string): void {
    if (this.closed) return;
    if (channel === SWITCHED) {
      if (message.split(" ")[0] === this.masterName) this.hooks.settled(channel);
      return;
    }
    if (masterOf(message) !== this.masterName) return;
    if (channel.startsWith("-failover-abort-")) this.hooks.settled(channel);
    else this.hooks.started(channel);
  }
}

/** The master an event is about: `master NAME ...`, or the name after `@` for a replica's or Sentinel's event. */
export function masterOf(message: string): string | undefined {
  const words = message.split(" ");
  if (words[0] === "master") return words[1];
  const at = words.indexOf("@");
  return at >= 0 ? words[at + 1] : undefined;
}
