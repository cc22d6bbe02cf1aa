import type { ServiceDefinition } from "@grpc/grpc-js";
import { ServerError } from "../../engine/server-error.js";
import { DECODED } from "../../tracing/wire-marks.js";
import { loadMessageSchema, type MessageSchema } from "./message-schema.js";
import { wireProblem } from "./wire-problem.js";

const MALFORMED = Symbol("malformed request");

/** Where each method's request fields are named from: the Session stream's from the bare field name. */
const ROOTS: Record<string, string> = { Session: "" };

/**
 * A copy of a service definition whose request deserializers read strictly (see wireProblem) and
 * never throw: grpc-js would end the call INTERNAL. A request that cannot be read arrives at the
 * handler as whatever could be decoded of it, marked so that `malformedProblem` says what is wrong;
 * so does one over `maxMessageBytes`, but a Session `open` (a resume's lists every hold: the
 * server's gRPC limit leaves room for it).
 */
export function strictService<S extends ServiceDefinition>(service: S, maxMessageBytes = Number.POSITIVE_INFINITY): S {
  const schema = loadMessageSchema();
  const strict: Record<string, unknown> = {};
  for (const [key, method] of Object.entries(service)) {
    const rpc = method.path.slice(method.path.lastIndexOf("/") + 1);
    const typeName = schema.requestTypes.get(method.path);
    if (!typeName) throw new Error(`strictService: no request type given for ${method.path}`);
    const root = ROOTS[rpc] ?? snakeCase(rpc);
    const read = reader(schema, typeName, root, method.requestDeserialize, maxMessageBytes);
    strict[key] = { ...method, requestDeserialize: read };
  }
  return strict as S;
}

/** A method's name as its request's root in field paths (`CheckFence` → `check_fence`), as the validator names it. */
function snakeCase(rpc: string): string {
  return rpc.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

/** What could not be read of a request that `strictService` marked, or undefined for a sound one. */
export function malformedProblem(request: unknown): string | undefined {
  return typeof request === "object" && request !== null ? (request as { [MALFORMED]?: string })[MALFORMED] : undefined;
}

/**
 * For a request `strictService` marked: the failure to answer it with (INVALID_ARGUMENT naming what
 * could not be read) and the request id and name it carries, if they could be decoded; else undefined.
 */
export function malformedFailure(
  request: unknown,
): { requestId: string; name: string; error: ServerError } | undefined {
  const problem = malformedProblem(request);
  if (problem === undefined) return undefined;
  const { kind } = request as { kind?: { $case: string } & Record<string, { requestId?: string; name?: string }> };
  const { requestId = "", name = "" } = kind?.[kind.$case] ?? {};
  return { requestId, name, error: new ServerError("invalid-argument", problem) };
}

function reader<T>(
  schema: MessageSchema,
  typeName: string,
  root: string,
  decode: (bytes: Buffer) => T,
  maxMessageBytes: number,
) {
  const read = strictReader(schema, typeName, root, decode, maxMessageBytes);
  return (bytes: Buffer): T => {
    if (!DECODED.hasSubscribers) return read(bytes);
    const startedAt = process.hrtime.bigint();
    const message = read(bytes);
    DECODED.publish({ message, startedAt });
    return message;
  };
}

function strictReader<T>(
  schema: MessageSchema,
  typeName: string,
  root: string,
  decode: (bytes: Buffer) => T,
  maxMessageBytes: number,
) {
  return (bytes: Buffer): T => {
    const problem = wireProblem(schema, typeName, bytes, root);
    let decoded: T | undefined;
    try {
      decoded = decode(bytes);
    } catch (err) {
      return marked<T>({}, problem ?? `${root || "request"}: could not be read (${(err as Error).message})`);
    }
    const why = problem ?? oversized(bytes.length, root, decoded, maxMessageBytes);
    return why === undefined ? decoded : marked<T>(decoded as object, why);
  };
}

/** Why a message of `length` bytes, read as `decoded`, is too large, or undefined; a Session `open` may be larger. */
function oversized(length: number, root: string, decoded: unknown, maxMessageBytes: number): string | undefined {
  if (length <= maxMessageBytes) return undefined;
  if (root === "" && (decoded as { kind?: { $case?: string } }).kind?.$case === "open") return undefined;
  return `${root || "request"}: ${length} bytes exceeds the maximum of ${maxMessageBytes} bytes (--max-message-bytes)`;
}

function marked<T>(request: object, problem: string): T {
  return Object.assign(request, { [MALFORMED]: problem }) as T;
}
