import type { Claim, Grant } from "../../store.js";
import type { RedisClient } from "../connection/redis-connection.js";
import { grantChannel } from "../records/lock-keys.js";

interface Held {
  socket: unknown;
  name: string;
  flat: string[];
}

/**
 * Routes grants scripts made: this coordinator's own waiters get them directly, other
 * coordinators' through their grant channels. With replica acks on, scripts return other
 * coordinators' grants ("coordinator waiter") instead of publishing them, and they go out only
 * once acknowledged; grants of a write whose WAIT fell short are held until a later WAIT on the
 * same connection succeeds (it covers them), and dropped once that connection closed, where the
 * waiter's own re-check finds whatever the new master kept.
 */
export class GrantOutbox {
  private held: Held[] = [];

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly emit: (grant: Grant) => void,
    /** A hand-on passed over an acquire-set member of this coordinator that fits (token ''): retry its set. */
    private readonly retrySet: (waiter: Omit<Claim, "owner">) => void = () => {},
  ) {}

  /** Hands on the grants of an acknowledged (or unreplicated) script reply. */
  deliver(name: string, flat: string[], freedAtMs?: number): void {
    for (let i = 0; i < flat.length; i += 2) {
      const [waiter, token] = [flat[i], flat[i + 1]];
      const space = waiter.indexOf(" ");
      if (space < 0) this.route(grantOf(name, waiter, token, freedAtMs), token);
      else {
        const [coordinator, waiterId] = [waiter.slice(0, space), waiter.slice(space + 1)];
        // Fire and forget: a lost publish is a grant the waiter's re-check still finds.
        this.redis.publish(grantChannel(this.prefix, coordinator), `${waiterId}\n${token}\n${name}`).catch(() => {});
      }
    }
  }

  /** Keeps the grants of a reply whose WAIT fell short, for `acknowledged`. */
  hold(socket: unknown, name: string, flat: string[]): void {
    if (flat.length > 0) this.held.push({ socket, name, flat });
  }

  /**
   * A WAIT on `socket` succeeded: every write before it is acknowledged, so deliver what was held.
   * Other open connections' grants (Cluster: other masters) wait for their own WAIT; a closed one's are dropped.
   */
  acknowledged(socket: unknown): void {
    const held = this.held;
    this.held = held.filter((h) => h.socket !== socket && !(h.socket as { destroyed?: boolean }).destroyed);
    for (const h of held) if (h.socket === socket) this.deliver(h.name, h.flat);
  }

  /** Drops every held grant: a failover was announced, and the new master may not have them. */
  dropHeld(): void {
    this.held = [];
  }

  /** Parses a message of this coordinator's grant channel ("waiter\ntoken\nname"). */
  received(message: string): void {
    const [waiter, token, ...name] = message.split("\n");
    this.route(grantOf(name.join("\n"), waiter, token), token);
  }

  private route(grant: Grant, token: string): void {
    if (token !== "") this.emit(grant);
    else this.retrySet({ name: grant.name, sessionId: grant.sessionId, requestId: grant.requestId });
  }
}

function grantOf(name: string, waiterId: string, token: string, freedAtMs?: number): Grant {
  // Session ids are hex, so the first colon ends the session part of "session:request".
  const colon = waiterId.indexOf(":");
  return {
    name,
    sessionId: waiterId.slice(0, colon),
    requestId: waiterId.slice(colon + 1),
    token: token === "" ? 0n : BigInt(token),
    freedAtMs,
  };
}
