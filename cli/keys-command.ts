import { readFileSync } from "node:fs";
import { get as httpGet, type IncomingMessage } from "node:http";
import { get as httpsGet } from "node:https";
import { parseArgs } from "node:util";
import { parseDurationText } from "../wire/duration-text.js";
import { MAX_TIMER_MS, MAX_TIMER_TEXT } from "../wire/max-timer-ms.js";
import { LockExit } from "./exit-codes.js";
import { argsOrExit } from "./flags/parse-admin-args.js";

const USAGE = `Usage: turnstile keys --server ADDR [options]

Prints the coordinators' published fencing keys: the JWK Set (RFC 7517) a coordinator started
with --fencing-key serves at GET /.well-known/jwks.json on its --http listener (docs/fencing.md).
Resources verify fencing proofs against these keys.

Options:
  --server ADDR        the coordinator's --http address: HOST:PORT (http://) or an http(s):// URL
  --tls-ca FILE        trust this CA's PEM for an https:// URL (the console serves HTTPS with TLS)
  --output json|kids   the whole key set as JSON (default), or one kid per line
  --timeout DURATION   give up after this long (default 5s)
  -h, --help           this help

Exit codes: 0 printed; 2 bad usage; 69 the keys could not be fetched.
`;

interface KeysArgs {
  url: URL;
  ca?: Buffer;
  output: "json" | "kids";
  timeoutMs: number;
}

/** `turnstile keys`: one GET of the coordinator's JWKS, printed. */
export async function run(argv: string[]): Promise<number> {
  const args = argsOrExit("keys", USAGE, argv, () => parseKeysArgs(argv));
  if (typeof args === "number") return args;
  try {
    const body = await fetchJwks(args);
    const set = JSON.parse(body) as { keys?: { kid?: string }[] };
    if (!Array.isArray(set.keys)) throw new Error('the answer has no "keys" array');
    if (args.output === "kids") process.stdout.write(set.keys.map((k) => `${k.kid}\n`).join(""));
    else process.stdout.write(`${JSON.stringify(set, null, 2)}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`turnstile keys: ${args.url.href}: ${(err as Error).message}\n`);
    return LockExit.unavailable;
  }
}

function parseKeysArgs(argv: string[]): KeysArgs | string {
  let values: Record<string, string | undefined>;
  try {
    const options = {
      server: { type: "string" },
      "tls-ca": { type: "string" },
      output: { type: "string" },
      timeout: { type: "string" },
    } as const;
    values = parseArgs({ args: argv, options, strict: true }).values;
  } catch (err) {
    return (err as Error).message.split(". ")[0];
  }
  const server = values.server;
  if (!server) return "--server is required: the coordinator's --http address (HOST:PORT or URL)";
  let url: URL;
  try {
    url = new URL(/^https?:\/\//.test(server) ? server : `http://${server}`);
  } catch {
    return `--server must be HOST:PORT or an http(s):// URL, got "${server}"`;
  }
  if (url.pathname === "/" || url.pathname === "") url.pathname = "/.well-known/jwks.json";
  const output = values.output ?? "json";
  if (output !== "json" && output !== "kids") return `--output must be json or kids, got "${output}"`;
  const timeoutText = values.timeout ?? "5s";
  const timeoutMs = parseDurationText(timeoutText);
  // A longer socket timeout would fire after 1 ms (Node's timer limit).
  if (timeoutMs === undefined || timeoutMs <= 0 || timeoutMs > MAX_TIMER_MS)
    return `--timeout must be a duration above 0, at most ${MAX_TIMER_TEXT}, such as 3s, got "${timeoutText}"`;
  let ca: Buffer | undefined;
  if (values["tls-ca"]) {
    try {
      ca = readFileSync(values["tls-ca"]);
    } catch (err) {
      return `--tls-ca: cannot read ${values["tls-ca"]} (${(err as NodeJS.ErrnoException).code})`;
    }
  }
  return { url, ca, output, timeoutMs };
}

function fetchJwks({ url, ca, timeoutMs }: KeysArgs): Promise<string> {
  return new Promise((resolve, reject) => {
    const onResponse = (res: IncomingMessage) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`HTTP ${res.statusCode}`))));
      res.on("error", reject);
    };
    const options = { timeout: timeoutMs, ...(ca && { ca }) };
    const req = url.protocol === "https:" ? httpsGet(url, options, onResponse) : httpGet(url, options, onResponse);
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
  });
}
