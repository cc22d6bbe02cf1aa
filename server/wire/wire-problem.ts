import { isUtf8 } from "node:buffer";
import type { FieldKind, FieldSpec, MessageSchema } from "./message-schema.js";

const WIRE_TYPE: Record<FieldKind, number> = { varint: 0, fixed64: 1, string: 2, bytes: 2, message: 2, fixed32: 5 };
const MAX_DEPTH = 32;

/**
 * Reads a protobuf message of type `typeName` strictly and says what is wrong with it, or
 * undefined when nothing is: truncated or overlong values, field number 0, groups or unknown wire
 * types, a declared field sent with another wire type than its type's, and strings that are not
 * valid UTF-8. `path` names the message in the answer ("acquire.name: not valid UTF-8"). Unknown
 * fields are skipped (a newer client may send them).
 */
export function wireProblem(
  schema: MessageSchema,
  typeName: string,
  buf: Uint8Array,
  path: string,
): string | undefined {
  return check(schema, typeName, buf, path, 0);
}

function check(
  schema: MessageSchema,
  typeName: string,
  buf: Uint8Array,
  path: string,
  depth: number,
): string | undefined {
  // The Session stream's fields are named without a root ("acquire.name"); the message itself is "request".
  const label = path === "" ? "request" : path;
  if (depth > MAX_DEPTH) return `${label}: nested more than ${MAX_DEPTH} deep`;
  const fields = schema.messages.get(typeName);
  const seen = new Map<number, number>();
  let pos = 0;
  while (pos < buf.length) {
    const tag = varint(buf, pos);
    if (!tag) return `${label}: could not be read (a field tag is truncated or longer than 10 bytes)`;
    pos = tag.end;
    const fieldNo = Math.floor(tag.value / 8);
    const wireType = tag.value % 8;
    if (fieldNo === 0 || fieldNo > 0x1fffffff) return `${label}: could not be read (field number ${fieldNo})`;
    const field = fields?.get(fieldNo);
    const where = field ? join(path, fieldNo, field, seen) : `${label} field ${fieldNo}`;
    let value: Uint8Array | undefined;
    if (wireType === 0) {
      const v = varint(buf, pos);
      if (!v) return `${where}: could not be read (a varint is truncated or longer than 10 bytes)`;
      pos = v.end;
    } else if (wireType === 1 || wireType === 5) {
      pos += wireType === 1 ? 8 : 4;
      if (pos > buf.length) return `${where}: could not be read (the message ends inside it)`;
    } else if (wireType === 2) {
      const len = varint(buf, pos);
      if (!len || len.end + len.value > buf.length) return `${where}: could not be read (the message ends inside it)`;
      value = buf.subarray(len.end, len.end + len.value);
      pos = len.end + len.value;
    } else {
      return `${where}: could not be read (wire type ${wireType} is not used by this protocol)`;
    }
    if (!field) continue;
    const expected = WIRE_TYPE[field.kind];
    const packed = field.repeated && wireType === 2 && expected !== 2;
    if (wireType !== expected && !packed) {
      return `${where}: sent as wire type ${wireType}, but a ${field.kind} field is wire type ${expected}`;
    }
    if (field.kind === "string" && !isUtf8(value!)) return `${where}: not valid UTF-8`;
    if (field.kind === "message") {
      const problem = check(schema, field.typeName!, value!, where, depth + 1);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** The field's path: `path.name`, with `[i]` for the i-th element of a repeated field. */
function join(path: string, fieldNo: number, field: FieldSpec, seen: Map<number, number>): string {
  const name = path === "" ? field.name : `${path}.${field.name}`;
  if (!field.repeated) return name;
  const i = seen.get(fieldNo) ?? 0;
  seen.set(fieldNo, i + 1);
  return `${name}[${i}]`;
}

/** A varint's value (exact below 2^53, enough for tags and lengths) and where it ends; undefined if malformed. */
function varint(buf: Uint8Array, pos: number): { value: number; end: number } | undefined {
  let value = 0;
  for (let i = 0; i < 10; i++) {
    if (pos + i >= buf.length) return undefined;
    const byte = buf[pos + i];
    value += (byte & 0x7f) * 2 ** (7 * i);
    if (byte < 0x80) return { value, end: pos + i + 1 };
  }
  return undefined;
}
