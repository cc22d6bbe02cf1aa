import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import type { Logger } from "pino";
import type { Limits } from "../config/limits.js";
import type { LockAdmin } from "../edge/grpc/lock-admin.js";
import type { RequestValidator } from "../edge/request-validator.js";
import type { WatchHub } from "../engine/locks/watch-hub.js";
import { ServerError, type ServerErrorReason, toServerError } from "../engine/server-error.js";
import type { Store } from "../store/store.js";
import type { ConsoleAccess } from "./access/console-access.js";
import { isLoopbackHost } from "./access/loopback-host.js";
import { ConsoleAssets, SECURITY_HEADERS } from "./console-assets.js";
import { ConsoleFeed } from "./console-feed.js";
import { type ConsoleLimits, type ConsoleStats, DEFAULT_CONSOLE_LIMITS } from "./console-limits.js";
import { readRevokeBody } from "./revoke-body.js";

/** What the console needs from its coordinator, and its own settings. */
export interface ConsoleDeps {
  store: Store;
  watches: WatchHub;
  admin: LockAdmin;
  validator: RequestValidator;
  limits: Limits;
  access: ConsoleAccess;
  log: Logger;
  /** True when listening on loopback: a Host header naming anything else is refused (DNS rebinding). */
  loopbackOnly: boolean;
  console?: Partial<ConsoleLimits>;
}

const HTTP_STATUS: Partial<Record<ServerErrorReason, number>> = {
  "invalid-argument": 400,
  unauthenticated: 401,
  "not-found": 404,
  "failed-precondition": 409,
  "resource-exhausted": 503,
  unavailable: 503,
};

/**
 * The web console's HTTP side, inside the coordinator: the page's static files, `GET /api/whoami`,
 * the live stream `GET /api/stream?prefix=P&name=N` and `POST /api/revoke`. Every API request is
 * identified by its `Authorization: Bearer` header and checked against the access rules; answers
 * carry a strict Content-Security-Policy.
 */
export class ConsoleHttpHandler {
  readonly stats: ConsoleStats = { clients: 0, overflows: 0, peakBufferedBytes: 0 };
  private readonly assets = new ConsoleAssets();
  private readonly limits: ConsoleLimits;

  constructor(private readonly deps: ConsoleDeps) {
    this.limits = { ...DEFAULT_CONSOLE_LIMITS, ...deps.console };
  }

  /** The request listener (for `http.createServer` or a shared listener). */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.route(req, res).catch((err) => {
      const e = toServerError(err, "console", this.deps.log);
      if (!res.headersSent) this.answer(res, HTTP_STATUS[e.reason] ?? 500, { error: e.message });
      else res.destroy();
    });
  };

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://console.invalid");
    if (!this.hostAllowed(req.headers.host)) {
      return this.answer(res, 403, { error: "host: the console answers only to a loopback Host header" });
    }
    const path = url.pathname;
    const route = this.assets.has(path) ? "asset" : path;
    // HEAD is GET without the body (Node's response leaves the body out): monitors and curl -I probe with it.
    const methods = route === "/api/revoke" ? ["POST"] : ["GET", "HEAD"];
    if (!["asset", "/api/whoami", "/api/stream", "/api/revoke"].includes(route)) {
      return this.answer(res, 404, { error: `not found: ${path.slice(0, 100)}` });
    }
    if (!methods.includes(req.method ?? "")) {
      const allow = methods.join(", ");
      return this.answer(res, 405, { error: `${path}: use ${methods[0]}` }, { allow });
    }
    if (route === "asset") return this.assets.serve(path, res);
    const identity = this.deps.access.identify(req.headers);
    if (identity === undefined) {
      const error = req.headers.authorization ? "the token is not valid" : "send Authorization: Bearer <token>";
      return this.answer(res, 401, { error: `unauthenticated: ${error}` }, { "www-authenticate": "Bearer" });
    }
    if (route === "/api/whoami") return this.answer(res, 200, { identity, authRequired: this.deps.access.required });
    if (route === "/api/stream" && req.method === "HEAD") {
      // The stream's headers, and no feed: a HEAD has no body to send its events in.
      return void res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8" }).end();
    }
    if (route === "/api/stream") return this.stream(req, res, identity, url.searchParams);
    return this.revoke(req, res, identity);
  }

  private stream(req: IncomingMessage, res: ServerResponse, identity: string, params: URLSearchParams): void {
    const { validator, watches, limits, access } = this.deps;
    if (!strictQuery(req.url ?? ""))
      throw new ServerError("invalid-argument", "query: not valid percent-encoded UTF-8");
    const prefix = validator.list({ prefix: params.get("prefix") ?? "", pageSize: 0, pageToken: "" }).prefix;
    const name = params.get("name") || undefined;
    if (name !== undefined) {
      validator.name("name", name);
      if (!access.may(identity, "read", name)) {
        this.answer(res, 403, { error: `permission denied: ${identity} may not read this lock` });
        return;
      }
    }
    if (this.stats.clients >= this.limits.maxClients) {
      throw new ServerError("resource-exhausted", `console: at most ${this.limits.maxClients} open streams`);
    }
    if (name !== undefined && watches.size >= limits.maxWatches) {
      throw new ServerError("resource-exhausted", `coordinator: at most ${limits.maxWatches} watches`);
    }
    const deps = { ...this.deps, limits: this.limits, stats: this.stats };
    new ConsoleFeed(res, deps, { identity, headers: req.headers, prefix, name }).start(SECURITY_HEADERS);
  }

  private async revoke(req: IncomingMessage, res: ServerResponse, identity: string): Promise<void> {
    const origin = req.headers.origin;
    const scheme = (req.socket as TLSSocket).encrypted ? "https" : "http";
    if (origin !== undefined && origin !== `${scheme}://${req.headers.host}`) {
      return this.answer(res, 403, { error: "origin: revoke only from the console's own page" });
    }
    const hold = await readRevokeBody(req);
    if (!this.deps.access.may(identity, "admin", hold.name)) {
      this.deps.log.warn({ identity, name: hold.name }, "console revoke refused: no admin right");
      return this.answer(res, 403, { error: `permission denied: ${identity} has no admin right on this lock` });
    }
    // The identity goes on so that LockAdmin checks the policy too and logs who revoked.
    const answer = await this.deps.admin.revoke(hold, identity);
    this.deps.log.info({ identity, ...hold }, "console revoke");
    this.answer(res, 200, { fencingToken: String(answer.fencingToken), holdCount: answer.holdCount });
  }

  private hostAllowed(host: string | undefined): boolean {
    if (!this.deps.loopbackOnly) return true;
    try {
      const { hostname } = new URL(`http://${host}`);
      return isLoopbackHost(hostname);
    } catch {
      return false;
    }
  }

  private answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { ...SECURITY_HEADERS, ...headers, "content-type": "application/json; charset=utf-8" });
    res.end(text);
  }
}

/** URLSearchParams decodes invalid percent-encoded UTF-8 to U+FFFD; decodeURIComponent refuses it. */
function strictQuery(path: string): boolean {
  const at = path.indexOf("?");
  try {
    decodeURIComponent(at < 0 ? "" : path.slice(at + 1).replace(/\+/g, " "));
    return true;
  } catch {
    return false;
  }
}
