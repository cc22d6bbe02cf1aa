#!/usr/bin/env node
// The `turnstile` command: starts the compiled CLI, dist/bin/turnstile-cli.js (built from
// bin/turnstile-cli.ts by `npm run build`; in a clone `npm ci` builds it through the `prepare`
// script). Plain JavaScript so that it runs without a build and can say what is missing.
import { existsSync } from "node:fs";

const cli = new URL("../dist/bin/turnstile-cli.js", import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write("turnstile: dist/ is not built: run `npm run build` (npm ci runs it) and try again\n");
  process.exit(1);
}
await import(cli.href);
