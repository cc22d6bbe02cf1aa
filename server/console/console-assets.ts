import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";

/**
 * Headers on every console response: a Content-Security-Policy that allows only the console's own
 * script, style and same-origin fetches (no inline script, no framing, no plugins), no sniffing,
 * no referrer and no caching.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "cross-origin-resource-policy": "same-origin",
};

const FILES: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/console.js": { file: "console.js", type: "text/javascript; charset=utf-8" },
  "/console.css": { file: "console.css", type: "text/css; charset=utf-8" },
  // Linked from the page, so the browser never asks for a missing /favicon.ico.
  "/favicon.svg": { file: "favicon.svg", type: "image/svg+xml" },
};

/** The console's static files (server/console/static), read once at start and served from memory. */
export class ConsoleAssets {
  private readonly files = new Map<string, { body: Buffer; type: string }>();

  constructor(dir = new URL("./static/", import.meta.url)) {
    for (const [path, { file, type }] of Object.entries(FILES)) {
      this.files.set(path, { body: readFileSync(new URL(file, dir)), type });
    }
  }

  /** Whether `path` is one of the static files. */
  has(path: string): boolean {
    return this.files.has(path);
  }

  /** Answers a GET of a static file. */
  serve(path: string, res: ServerResponse): void {
    const asset = this.files.get(path);
    if (!asset) return void res.writeHead(404, SECURITY_HEADERS).end();
    res.writeHead(200, { ...SECURITY_HEADERS, "content-type": asset.type, "content-length": asset.body.length });
    res.end(asset.body);
  }
}
