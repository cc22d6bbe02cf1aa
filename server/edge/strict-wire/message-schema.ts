import { fileURLToPath } from "node:url";
import { loadSync } from "@grpc/proto-loader";

const PROTO_DIR = fileURLToPath(new URL("../../../proto", import.meta.url));

/** How a field's value is laid out on the wire, by its declared type. */
export type FieldKind = "varint" | "fixed64" | "fixed32" | "string" | "bytes" | "message";

/** One declared field of a message: its proto name, layout and (for messages) its type. */
export interface FieldSpec {
  name: string;
  kind: FieldKind;
  repeated: boolean;
  /** Full name of the field's message type, for `kind` "message". */
  typeName?: string;
}

/** Every message type of turnstile.proto by full name (fields by number), and each RPC's request type by path. */
export interface MessageSchema {
  messages: ReadonlyMap<string, ReadonlyMap<number, FieldSpec>>;
  requestTypes: ReadonlyMap<string, string>;
}

const KINDS: Record<string, FieldKind> = {
  TYPE_STRING: "string",
  TYPE_BYTES: "bytes",
  TYPE_MESSAGE: "message",
  TYPE_DOUBLE: "fixed64",
  TYPE_FIXED64: "fixed64",
  TYPE_SFIXED64: "fixed64",
  TYPE_FLOAT: "fixed32",
  TYPE_FIXED32: "fixed32",
  TYPE_SFIXED32: "fixed32",
};

interface Method {
  path: string;
  requestType: { type: { name: string } };
}

interface Descriptor {
  field: { name: string; number: number; label: string; type: string; typeName: string }[];
}

// The .proto does not change while the process runs: every coordinator it starts shares one schema.
let loaded: MessageSchema | undefined;

/** The field tables of turnstile.v1 (and the well-known types it uses), read from the .proto once. */
export function loadMessageSchema(): MessageSchema {
  loaded ??= readMessageSchema();
  return loaded;
}

function readMessageSchema(): MessageSchema {
  const definition = loadSync(["turnstile/v1/turnstile.proto"], { includeDirs: [PROTO_DIR], keepCase: true });
  const messages = new Map<string, Map<number, FieldSpec>>();
  const requestTypes = new Map<string, string>();
  for (const [fullName, entry] of Object.entries(definition)) {
    const pkg = fullName.slice(0, fullName.lastIndexOf("."));
    if (!("format" in entry)) {
      // A service: its methods by name, each naming its request type within the package.
      for (const method of Object.values(entry as Record<string, Method>)) {
        requestTypes.set(method.path, `${pkg}.${method.requestType.type.name}`);
      }
      continue;
    }
    if (entry.format !== "Protocol Buffer 3 DescriptorProto") continue;
    const fields = new Map<number, FieldSpec>();
    for (const f of (entry.type as Descriptor).field) {
      const kind = KINDS[f.type] ?? "varint";
      // Types of the same package are named relative to it; others by their full name.
      const typeName = kind !== "message" ? undefined : f.typeName in definition ? f.typeName : `${pkg}.${f.typeName}`;
      fields.set(f.number, { name: f.name, kind, repeated: f.label === "LABEL_REPEATED", typeName });
    }
    messages.set(fullName, fields);
  }
  return { messages, requestTypes };
}
