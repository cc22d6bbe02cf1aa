import { createHash } from "node:crypto";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { FencingKeys } from "./fencing-keys.js";

/** Where the published fencing keys are served on the `--http` listener. */
export const JWKS_PATH = "/.well-known/jwks.json";

/** How long a verifier may cache the key set (it refetches on an unknown `kid` anyway). */
export const JWKS_MAX_AGE_S = 300;

/**
 * `GET /.well-known/jwks.json` (the fencing keys, RFC 7517, with cache headers and an ETag) in front
 * of `others` (the web console), which gets every other request. The key set is public: no
 * credentials are asked for.
 */
export function withJwks(keys: FencingKeys, others: RequestListener): RequestListener {
  const body = JSON.stringify(keys.jwks());
  const etag = `"${createHash("sha256").update(body).digest("base64url")}"`;
  return (req: IncomingMessage, res: ServerResponse) => {
    if ((req.url ?? "").split("?")[0] !== JWKS_PATH) return others(req, res);
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end("method not allowed\n");
      return;
    }
    const headers = {
      "content-type": "application/jwk-set+json",
      "cache-control": `public, max-age=${JWKS_MAX_AGE_S}`,
      etag,
    };
    if (req.headers["if-none-match"] === etag) return void res.writeHead(304, headers).end();
    res.writeHead(200, headers).end(req.method === "HEAD" ? undefined : body);
  };
}
