import { tracingChannel } from "node:diagnostics_channel";
import type { SpanAttributes } from "./tracing.js";

/** What ioredis publishes on its "ioredis:command" tracing channel for each command it writes. */
interface CommandContext {
  command: string;
  database: number;
  serverAddress: string;
  serverPort?: number;
  error?: unknown;
}

/** One span as this module needs it: set an error, end. */
interface CommandSpan {
  fail(message: string): void;
  end(): void;
}

/**
 * ioredis's own instrumentation: ioredis 6 publishes every command on the diagnostics tracing
 * channel "ioredis:command", and does nothing extra while nobody subscribes (tracing off). This
 * subscribes and opens a span per command through `start`, which returns undefined to skip one
 * (commands outside any request). A Lua script is one EVALSHA (EVAL after NOSCRIPT). Returns the
 * unsubscribe function.
 */
export function traceRedisCommands(
  start: (name: string, attributes: SpanAttributes) => CommandSpan | undefined,
): () => void {
  const channel = tracingChannel<string, CommandContext>("ioredis:command");
  const spans = new WeakMap<object, CommandSpan>();
  const handlers = {
    start(ctx: CommandContext) {
      const operation = ctx.command.toUpperCase();
      const span = start(operation, {
        "db.system.name": "redis",
        "db.operation.name": operation,
        "db.namespace": String(ctx.database),
        "server.address": ctx.serverAddress,
        ...(ctx.serverPort === undefined ? {} : { "server.port": ctx.serverPort }),
      });
      if (span) spans.set(ctx, span);
    },
    error(ctx: CommandContext) {
      const e = ctx.error;
      spans.get(ctx)?.fail(e instanceof Error ? e.message : String(e));
    },
    asyncEnd(ctx: CommandContext) {
      spans.get(ctx)?.end();
      spans.delete(ctx);
    },
  };
  channel.subscribe(handlers as Parameters<typeof channel.subscribe>[0]);
  return () => channel.unsubscribe(handlers as Parameters<typeof channel.unsubscribe>[0]);
}
