import { format } from "node:util";
import { setLogger } from "@grpc/grpc-js";
import type { Logger } from "pino";

/**
 * Sends grpc-js's own log lines (by default plain `E ...` lines on stderr) into the coordinator's
 * JSON log at debug level, tagged `"component":"grpc-js"`. Failures that matter reach us as errors
 * too and are logged once, in our words; these lines are the detail behind them (--log-level debug).
 */
export function routeGrpcJsLog(log: Logger): void {
  const child = log.child({ component: "grpc-js" });
  const at =
    (severity: string) =>
    (message?: unknown, ...rest: unknown[]) =>
      child.debug({ severity }, format(message, ...rest));
  setLogger({ error: at("error"), info: at("info"), debug: at("debug") });
}
