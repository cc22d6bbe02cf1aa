import type { Acquire, Release, SessionResponse } from "../../gen/ts/turnstile/v1/turnstile.js";
import { holderKey } from "../../wire/holder-key.js";
import type { TraceSpan, Tracing } from "./tracing.js";

/**
 * The acquire spans of the holds this coordinator's sessions have, by lock name: what the span of
 * a waiter that queues behind them links to. A holder served by another coordinator is not here.
 */
export class HolderSpans {
  private readonly byName = new Map<string, Map<string, string>>();

  set(name: string, holder: string, traceParent: string): void {
    const holders = this.byName.get(name) ?? this.byName.set(name, new Map()).get(name)!;
    holders.set(holder, traceParent);
  }

  delete(name: string, holder: string): void {
    const holders = this.byName.get(name);
    holders?.delete(holder);
    if (holders?.size === 0) this.byName.delete(name);
  }

  /** The traceparents of the holders of `name` on this coordinator. */
  of(name: string): string[] {
    return [...(this.byName.get(name)?.values() ?? [])];
  }
}

/** The tracing of one coordinator's sessions: the tracer and the holders' spans. */
export interface SessionTraces {
  tracing: Tracing;
  holders: HolderSpans;
}

interface Open {
  span: TraceSpan;
  name: string;
  owner: string;
  queuedAtMs?: number;
}

/**
 * Traces one session's acquires and releases from request to answer by watching its messages:
 * `request` opens a server span (child of the caller's trace_parent), `response` records Queued as
 * an event (linking the span to the holders' spans it waits behind), and ends the span at
 * Acquired, Released or Failed. Holds granted here register their span in `HolderSpans`.
 */
export class SessionTracer {
  private readonly open = new Map<string, Open>();
  private readonly held = new Map<string, string>();

  constructor(
    private readonly traces: SessionTraces,
    private readonly sessionId: string,
  ) {}

  /** Opens the span of an incoming acquire or release and returns it (the parent of its store calls). */
  request(kind: "acquire" | "release", r: Acquire | Release): TraceSpan {
    this.open.get(r.requestId)?.span.end("request id reused");
    const span = this.traces.tracing.start(`turnstile.${kind}`, {
      kind: "server",
      traceParent: r.traceParent,
      attributes: {
        "turnstile.lock": r.name,
        "turnstile.owner": r.owner,
        "turnstile.request_id": r.requestId,
        "turnstile.session": this.sessionId,
      },
    });
    this.open.set(r.requestId, { span, name: r.name, owner: r.owner });
    return span;
  }

  /**
   * `op` to run inside the span of its request. The span opens now, when the request arrives, so
   * time spent waiting for admission is inside it.
   */
  wrap(kind: "acquire" | "release", r: Acquire | Release, op: () => Promise<void>): () => Promise<void> {
    const span = this.request(kind, r);
    return () => this.traces.tracing.within(span, op);
  }

  /** Looks at one outgoing message: answers end their request's span. */
  response(response: SessionResponse): void {
    const kind = response.kind;
    switch (kind?.$case) {
      case "queued": {
        const open = this.open.get(kind.queued.requestId);
        if (!open) return;
        open.queuedAtMs = performance.now();
        open.span.event("queued", { "turnstile.position": kind.queued.position });
        for (const holder of this.traces.holders.of(open.name))
          open.span.link(holder, { "turnstile.waited_behind": true });
        return;
      }
      case "acquired": {
        const open = this.answered(kind.acquired.requestId);
        if (!open) return;
        const { fencingToken, holdCount } = kind.acquired;
        if (open.queuedAtMs !== undefined)
          open.span.event("granted", { "turnstile.queue_ms": performance.now() - open.queuedAtMs });
        open.span.setAttributes({ "turnstile.fencing_token": String(fencingToken), "turnstile.hold_count": holdCount });
        if (holdCount === 1) this.hold(open.name, open.owner, open.span.traceParent);
        open.span.end();
        return;
      }
      case "released": {
        const open = this.answered(kind.released.requestId);
        if (kind.released.holdCount === 0 && open) this.unhold(open.name, open.owner);
        open?.span.end();
        return;
      }
      case "failed": {
        const open = this.answered(kind.failed.requestId);
        open?.span.setAttributes({
          "turnstile.failure": kind.failed.reason,
          "turnstile.blockers": kind.failed.blockedBy.length,
        });
        open?.span.end(kind.failed.message);
        return;
      }
      case "lost":
        this.unhold(kind.lost.name, kind.lost.owner);
        return;
    }
  }

  /** The session's stream ended: open spans end, its holds leave the registry. */
  end(): void {
    for (const open of this.open.values()) open.span.end("session stream ended");
    this.open.clear();
    for (const [key, name] of this.held) this.traces.holders.delete(name, key);
    this.held.clear();
  }

  private answered(requestId: string): Open | undefined {
    const open = this.open.get(requestId);
    this.open.delete(requestId);
    return open;
  }

  private hold(name: string, owner: string, traceParent: string): void {
    const key = holderKey(this.sessionId, name, owner);
    this.held.set(key, name);
    this.traces.holders.set(name, key, traceParent);
  }

  private unhold(name: string, owner: string): void {
    const key = holderKey(this.sessionId, name, owner);
    this.held.delete(key);
    this.traces.holders.delete(name, key);
  }
}
