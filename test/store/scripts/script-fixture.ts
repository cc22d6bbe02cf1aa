import { Redis } from "ioredis";
import {
  eventChannel,
  lockKeys,
  releaseRequestChannel,
  revocationChannel,
} from "../../../server/store/redis/records/lock-keys.js";
import { LockScripts, type ScriptArg } from "../../../server/store/redis/scripts/runner/lock-scripts.js";
import { MessageInbox } from "../../harness/message-inbox.js";
import { startRedis, type TestRedis } from "../../harness/redis-server.js";

/** Key prefix, grant channel prefix and fence retention the script tests run with. */
export const PREFIX = "t";
export const GRANTS = "t:grants:";
export const RETAIN_MS = 60_000;
/** A lease long enough never to end during a test. */
export const LONG_TTL = 30_000;

/**
 * The scripts' publish argument: 'watched' (a single server's) publishes holder changes only while
 * the event channel has a subscriber, 'always' (Cluster's) whether or not.
 */
export type Publish = "watched" | "always";

/** The Redis connection and scripts of one suite; filled in by the hooks `useScripts` adds. */
export interface ScriptFixture {
  server: TestRedis;
  redis: Redis;
  scripts: LockScripts;
}

/** Adds hooks: one redis-server for the suite, FLUSHALL before each test, both stopped after. */
export function useScripts(): ScriptFixture {
  const fixture = {} as ScriptFixture;
  before(async () => {
    fixture.server = await startRedis();
    fixture.redis = new Redis(fixture.server.url);
    fixture.scripts = new LockScripts(fixture.redis);
  });
  beforeEach(() => fixture.redis.flushall());
  after(async () => {
    fixture.redis?.disconnect();
    await fixture.server?.stop();
  });
  return fixture;
}

/** The six keys of a lock, in the scripts' order, and its event channel. */
export function keys(name: string) {
  const [holders, data, queue, leases, fence, version] = lockKeys(PREFIX, name);
  const all = [holders, data, queue, leases, fence, version];
  return { all, holders, data, queue, leases, fence, version, events: eventChannel(PREFIX, name) };
}

/** The revocation broadcast channel the script tests use. */
export const REVOCATIONS = revocationChannel(PREFIX);

export interface AcquireInput {
  session: string;
  owner?: string;
  request?: string;
  ttl?: number;
  /** 1 exclusive, 2 shared. */
  mode?: 1 | 2;
  limit?: number;
  mayWait?: boolean;
  coord?: string;
  value?: string | Buffer;
  /** Default 'watched'. */
  publish?: Publish;
  /** The epoch floors "F V" (default "0 0"). */
  floors?: string;
  /** Lock-delay ms of the hold; absent: the argument is left out (no delay). */
  lockDelay?: number;
  /** Queue priority; absent: the argument is left out (0). */
  priority?: number;
}

/** Runs acquire.lua; owner and request default to "o" and "r". */
export async function acquire(f: ScriptFixture, name: string, a: AcquireInput): Promise<unknown[]> {
  const args: ScriptArg[] = [a.session, a.owner ?? "o", a.request ?? "r", a.ttl ?? LONG_TTL, a.mode ?? 1];
  args.push(a.limit ?? 0, a.mayWait === false ? 0 : 1, a.coord ?? "c1", RETAIN_MS, a.value ?? "", keys(name).events);
  args.push(a.publish ?? "watched", a.floors ?? "0 0");
  if (a.lockDelay !== undefined || a.priority !== undefined) args.push(a.lockDelay ?? 0);
  if (a.priority !== undefined) args.push(a.priority);
  return (await f.scripts.run("acquire", keys(name).all, args)) as unknown[];
}

export interface ReleaseInput {
  session: string;
  owner?: string;
  /** A request id withdraws that waiter; absent or '' releases a hold. */
  request?: string;
  all?: boolean;
  /** With a request: 'cancel' (default) or 'abandon'. */
  how?: "cancel" | "abandon";
  coord?: string;
  /** Default 'watched'. */
  publish?: Publish;
  /** The epoch floors "F V" (default "0 0"). */
  floors?: string;
  /** The grant channel prefix; '' returns other coordinators' grants unpublished. */
  grantPrefix?: string;
}

/** Runs release.lua on behalf of coordinator `coord` (default "c1"). */
export async function release(f: ScriptFixture, name: string, r: ReleaseInput): Promise<unknown[]> {
  const how = r.request ? (r.how ?? "cancel") : r.all ? "all" : "one";
  const args: (string | number)[] = [r.session, r.owner ?? "o", r.request ?? "", how, r.coord ?? "c1"];
  args.push(RETAIN_MS, name, r.grantPrefix ?? GRANTS, keys(name).events, r.publish ?? "watched", r.floors ?? "0 0");
  return (await f.scripts.run("release", keys(name).all, args)) as unknown[];
}

/** Runs check.lua for coordinator `coord` with [waiter id, holder id] pairs. */
export async function check(
  f: ScriptFixture,
  name: string,
  coord: string,
  pairs: [string, string][],
  publish: Publish = "watched",
  floors = "0 0",
): Promise<[number, string[], string[]]> {
  const args = [coord, RETAIN_MS, name, GRANTS, keys(name).events, publish, floors, ...pairs.flat()];
  return (await f.scripts.run("check", keys(name).all, args)) as [number, string[], string[]];
}

/** Runs renew.lua for one session's holds (by owner) and queue entries ([request, owner]) on one lock. */
export function renew(
  f: ScriptFixture,
  name: string,
  session: string,
  ttl: number,
  owners: string[],
  waiters: [string, string][],
): Promise<(number | string)[]> {
  return renewMany(f, session, ttl, [{ name, owners, waiters }]);
}

/**
 * Runs renew.lua for one session on several locks at once: their statuses, lock after lock; given
 * `record` (a session record's key), last its touch's answer too.
 */
export async function renewMany(
  f: ScriptFixture,
  session: string,
  ttl: number,
  locks: { name: string; owners: string[]; waiters: [string, string][] }[],
  record?: string,
): Promise<(number | string)[]> {
  const lockKeys = locks.flatMap(({ name }) => {
    const { holders, leases, fence, data } = keys(name);
    return [holders, leases, fence, data];
  });
  if (record) lockKeys.push(record);
  const args = [session, ttl, 60_000];
  for (const l of locks) args.push(l.owners.length, l.waiters.length, ...l.owners, ...l.waiters.flat());
  return (await f.scripts.run("renew", lockKeys, args)) as (number | string)[];
}

/** Redis's clock in ms, as the scripts compute it. */
export async function redisNow(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** A connection pattern-subscribed to every grant channel, handing out messages in order. */
export interface GrantFeed {
  /** The next message (channel and payload); rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<{ channel: string; message: string }>;
  close(): void;
}

export async function subscribeGrants(url: string): Promise<GrantFeed> {
  const sub = new Redis(url);
  const inbox = new MessageInbox<{ channel: string; message: string }>();
  sub.on("pmessage", (_pattern: string, channel: string, message: string) => inbox.push({ channel, message }));
  await sub.psubscribe(`${GRANTS}*`);
  return {
    next: (timeoutMs = 2000) => inbox.next(timeoutMs, "grant message"),
    close: () => sub.disconnect(),
  };
}

/** Runs revoke.lua for coordinator `coord` (default "c1"). */
export async function revoke(
  f: ScriptFixture,
  name: string,
  r: { session: string; owner?: string; coord?: string; publish?: Publish; floors?: string },
): Promise<unknown[]> {
  const k = keys(name);
  const publish = r.publish ?? "watched";
  const args = [r.session, r.owner ?? "o", r.coord ?? "c1", RETAIN_MS, name, GRANTS, k.events, publish];
  args.push(r.floors ?? "0 0", REVOCATIONS);
  return (await f.scripts.run("revoke", k.all, args)) as unknown[];
}

/** Runs proclaim.lua. */
export async function proclaim(
  f: ScriptFixture,
  name: string,
  p: { session: string; owner?: string; value: string | Buffer; publish?: Publish; floors?: string },
): Promise<unknown[]> {
  const k = keys(name);
  const args = [p.session, p.owner ?? "o", p.value, k.events, p.publish ?? "watched", RETAIN_MS, p.floors ?? "0 0"];
  return (await f.scripts.run("proclaim", [k.holders, k.data, k.version], args)) as unknown[];
}

/** Runs describe.lua with bulk strings as Buffers (values are binary). */
export async function describeLock(f: ScriptFixture, name: string): Promise<unknown[]> {
  const k = keys(name);
  return (await f.scripts.runBuffer("describe", [k.holders, k.data, k.queue, k.leases, k.version], [])) as unknown[];
}

/** A connection subscribed to channels, handing out their messages (as Buffers) in order. */
export interface ChannelFeed {
  next(timeoutMs?: number): Promise<{ channel: string; message: Buffer }>;
  /**
   * Takes every message published (through `redis`) before this call: publishes a marker on a
   * channel of its own and waits for it, as one connection receives messages in publish order.
   */
  drain(redis: Redis): Promise<{ channel: string; message: Buffer }[]>;
  close(): void;
}

const MARKER = `${PREFIX}:test-marker`;

/** Subscribes to `channels` (e.g. a lock's event channel, REVOCATIONS). */
export async function subscribeChannels(url: string, ...channels: string[]): Promise<ChannelFeed> {
  const sub = new Redis(url);
  const inbox = new MessageInbox<{ channel: string; message: Buffer }>();
  sub.on("messageBuffer", (channel: Buffer, message: Buffer) => inbox.push({ channel: channel.toString(), message }));
  await sub.subscribe(...channels, MARKER);
  const feed: ChannelFeed = {
    async drain(redis) {
      await redis.publish(MARKER, "");
      const taken: { channel: string; message: Buffer }[] = [];
      for (let m = await feed.next(); m.channel !== MARKER; m = await feed.next()) taken.push(m);
      return taken;
    },
    next: (timeoutMs = 2000) => inbox.next(timeoutMs, `message on ${channels.join(", ")}`),
    close: () => sub.disconnect(),
  };
  return feed;
}

/** A published holder change split into its fields: head words, holder id and value. */
export function splitEvent(message: Buffer): { head: string[]; holder: string; value: string } {
  const [head, holder, ...value] = message.toString().split("\n");
  return { head: head.split(" "), holder, value: value.join("\n") };
}

/** The release-request broadcast channel the script tests use. */
export const RELEASE_REQUESTS = releaseRequestChannel(PREFIX);

/** Runs transfer.lua for coordinator `coord` (default "c1"): (session, owner) hands over to (to, toOwner). */
export async function transfer(
  f: ScriptFixture,
  name: string,
  t: {
    session: string;
    owner?: string;
    token: string;
    to?: string;
    toOwner?: string;
    coord?: string;
    grantPrefix?: string;
  },
): Promise<unknown[]> {
  const k = keys(name);
  const args = [t.session, t.owner ?? "o", t.token, t.to ?? "", t.toOwner ?? "", t.coord ?? "c1", RETAIN_MS, name];
  args.push(t.grantPrefix ?? GRANTS, k.events, "watched", "0 0");
  return (await f.scripts.run("transfer", k.all, args)) as unknown[];
}

/** Runs request-release.lua. */
export async function requestRelease(
  f: ScriptFixture,
  name: string,
  r: { requester: string; reason: string },
): Promise<unknown[]> {
  const k = keys(name);
  const args = [name, r.requester, r.reason, RELEASE_REQUESTS];
  return (await f.scripts.run("request-release", [k.holders, k.data], args)) as unknown[];
}
