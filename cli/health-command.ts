import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import { Client, type ServiceError, status } from "@grpc/grpc-js";
import { channelCredentials, readableDetails, withTransportHint } from "../client/admin.js";
import { parseDurationText } from "../wire/duration-text.js";
import { MAX_TIMER_MS, MAX_TIMER_TEXT } from "../wire/max-timer-ms.js";
import { LockExit } from "./exit-codes.js";
import { CONNECTION_HELP } from "./flags/connection-flags.js";
import { argsOrExit, parseAdminArgs } from "./flags/parse-admin-args.js";

const USAGE = `Usage: turnstile health [options]

Asks a coordinator's gRPC health service (grpc.health.v1.Health/Check) once and prints its answer:
SERVING, or NOT_SERVING while the coordinator cannot reach its store (Redis). Meant for container
health checks and scripts; load balancers can call the same service themselves.

Options:
${CONNECTION_HELP}
  --service NAME       the service to ask about (default "": the coordinator as a whole)
  --timeout DURATION   give up after this long, e.g. 3s (default 5s)
  -h, --help           this help

Exit codes: 0 SERVING; 1 any other status; 2 bad usage; 69 coordinator unreachable or the call
failed (e.g. NOT_FOUND for a --service it does not know).
`;

// grpc.health.v1.HealthCheckResponse.ServingStatus, by number.
const STATUS_NAMES = ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"];
const SERVING = 1;

/** `turnstile health`: one grpc.health.v1 Check; exit 0 only when the answer is SERVING. */
export async function run(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const args = argsOrExit("health", USAGE, argv, () => parseHealthArgs(argv, env));
  if (typeof args === "number") return args;
  // Over TLS (and mTLS, a token) when the connection flags say so, as every other command.
  const credentials = channelCredentials(args.connection);
  const client = new Client(args.server, credentials);
  try {
    const answer = await check(client, args.service, args.timeoutMs);
    process.stdout.write(`${STATUS_NAMES[answer] ?? `status ${answer}`}\n`);
    return answer === SERVING ? 0 : 1;
  } catch (err) {
    const e = err as ServiceError;
    const details = readableDetails(e.details ?? e.message);
    const line = withTransportHint(`${status[e.code] ?? "error"} ${details}`, details, credentials._isSecure());
    process.stderr.write(`turnstile health: ${args.server}: ${line}\n`);
    return LockExit.unavailable;
  } finally {
    client.close();
  }
}

function parseHealthArgs(argv: string[], env: NodeJS.ProcessEnv) {
  const args = parseAdminArgs(argv, { flags: ["service", "timeout"], positionals: [] }, env);
  if (typeof args === "string") return args;
  const timeoutText = args.values.timeout ?? "5s";
  const timeoutMs = parseDurationText(timeoutText);
  // grpc-js throws for a deadline beyond its timer limit ("Deadline is too far in the future").
  if (timeoutMs === undefined || timeoutMs <= 0 || timeoutMs > MAX_TIMER_MS)
    return `--timeout must be a duration above 0, at most ${MAX_TIMER_TEXT}, such as 3s, got "${timeoutText}"`;
  return { server: args.server, connection: args.connection, service: args.values.service ?? "", timeoutMs };
}

// The two health messages are one field each, so they are encoded by hand rather than generated.
function check(client: Client, service: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      "/grpc.health.v1.Health/Check",
      (name: string) => Buffer.from(name ? new BinaryWriter().uint32(10).string(name).finish() : new Uint8Array()),
      (bytes: Buffer) => servingStatus(bytes),
      service,
      { deadline: Date.now() + timeoutMs },
      (err, answer) => (err ? reject(err) : resolve(answer ?? 0)),
    );
  });
}

/** Field 1 (varint) of a HealthCheckResponse; other fields are skipped. */
function servingStatus(bytes: Uint8Array): number {
  const reader = new BinaryReader(bytes);
  let answer = 0;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === 8) answer = reader.int32();
    else reader.skip(tag & 7);
  }
  return answer;
}
