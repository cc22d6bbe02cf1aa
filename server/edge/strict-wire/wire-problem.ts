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
  return check(schema, typeName, buf, 0, buf.length, path, 0);
}

/** Checks buf[from, to) as a `typeName`; bounds instead of subarrays, as this runs on every request. */
function check(
  schema: MessageSchema,
  typeName: string,
  buf: Uint8Array,
  from: number,
  to: number,
  path: string,
  depth: number,
): string | undefined {
  // The Session stream's fields are named without a root ("acquire.name"); the message itself is "request".
  const label = path === "" ? "request" : path;
  if (depth > MAX_DEPTH) return `${label}: nested more than ${MAX_DEPTH} deep`;
  const fields = schema.messages.get(typeName);
  // Element indexes of repeated fields, counted only once one is seen (paths are built lazily).
  let seen: Map<number, number> | undefined;
  const where = (fieldNo: number, field: FieldSpec | undefined) => {
    if (!field) return `${label} field ${fieldNo}`;
    const name = path === "" ? field.name : `${path}.${field.name}`;
    return field.repeated ? `${name}[${(seen?.get(fieldNo) ?? 1) - 1}]` : name;
  };
  let pos = from;
  while (pos < to) {
    const tag = varint(buf, pos, to);
    if (tag < 0) return `${label}: could not be read (a field tag is truncated or longer than 10 bytes)`;
    pos = varintEnd;
    const fieldNo = Math.floor(tag / 8);
    const wireType = tag % 8;
    if (fieldNo === 0 || fieldNo > 0x1fffffff) return `${label}: could not be read (field number ${fieldNo})`;
    const field = fields?.get(fieldNo);
    if (field?.repeated) {
      seen ??= new Map();
      seen.set(fieldNo, (seen.get(fieldNo) ?? 0) + 1);
    }
    let start = pos;
    if (wireType === 0) {
      if (varint(buf, pos, to) < 0)
        return `${where(fieldNo, field)}: could not be read (a varint is truncated or longer than 10 bytes)`;
      pos = varintEnd;
    } else if (wireType === 1 || wireType === 5) {
      pos += wireType === 1 ? 8 : 4;
      if (pos > to) return `${where(fieldNo, field)}: could not be read (the message ends inside it)`;
    } else if (wireType === 2) {
      const len = varint(buf, pos, to);
      if (len < 0 || varintEnd + len > to) {
        return `${where(fieldNo, field)}: could not be read (the message ends inside it)`;
      }
      start = varintEnd;
      pos = varintEnd + len;
    } else {
      return `${where(fieldNo, field)}: could not be read (wire type ${wireType} is not used by this protocol)`;
    }
    if (!field) continue;
    const expected = WIRE_TYPE[field.kind];
    const packed = field.repeated && wireType === 2 && expected !== 2;
    if (wireType !== expected && !packed) {
      return `${where(fieldNo, field)}: sent as wire type ${wireType}, but a ${field.kind} field is wire type ${expected}`;
    }
    if (field.kind === "string" && !utf8(buf, start, pos)) return `${where(fieldNo, field)}: not valid UTF-8`;
    if (field.kind === "message") {
      const problem = check(schema, field.typeName!, buf, start, pos, where(fieldNo, field), depth + 1);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** True when buf[start, end) is valid UTF-8; ASCII, the common case, is checked without a copy. */
function utf8(buf: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (buf[i] >= 0x80) return isUtf8(buf.subarray(start, end));
  return true;
}

/** Where the last varint read ended. */
let varintEnd = 0;

/** A varint's value (exact below 2^53, enough for tags and lengths), its end in varintEnd; -1 if malformed. */
function varint(buf: Uint8Array, pos: number, end: number): number {
  let value = 0;
  let scale = 1;
  for (let i = pos; i < pos + 10; i++) {
    if (i >= end) return -1;
    const byte = buf[i];
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      varintEnd = i + 1;
      return value;
    }
    scale *= 128;
  }
  return -1;
}
