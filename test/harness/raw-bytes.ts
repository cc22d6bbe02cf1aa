import { Client, type ClientDuplexStream, credentials, type ServiceError } from "@grpc/grpc-js";
import { SessionRequest, SessionResponse } from "../../gen/ts/turnstile/v1/turnstile.js";

/** Protobuf wire pieces for hand-made (and deliberately malformed) messages. */
export const pb = {
  varint(n: number): Buffer {
    const out: number[] = [];
    let v = n;
    while (v >= 0x80) {
      out.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    out.push(v);
    return Buffer.from(out);
  },
  /** A length-delimited field: string, bytes or message. */
  field(fieldNo: number, bytes: Buffer | string): Buffer {
    const body = typeof bytes === "string" ? Buffer.from(bytes) : bytes;
    return Buffer.concat([pb.varint(fieldNo * 8 + 2), pb.varint(body.length), body]);
  },
  /** A varint field. */
  int(fieldNo: number, n: number): Buffer {
    return Buffer.concat([pb.varint(fieldNo * 8), pb.varint(n)]);
  },
};

const raw = (b: Buffer) => b;
const SERVICE = "/turnstile.v1.LockService/";

/**
 * A gRPC client that sends request bodies as given bytes, so tests can send what no generated
 * client would: truncated messages, wrong wire types, invalid UTF-8.
 */
export class RawBytesClient {
  private readonly client: Client;

  constructor(address: string) {
    this.client = new Client(address, credentials.createInsecure());
  }

  /** A Session stream whose writes are raw bytes and whose reads are decoded responses. */
  session(): ClientDuplexStream<Buffer, SessionResponse> {
    return this.client.makeBidiStreamRequest(`${SERVICE}Session`, raw, (b: Buffer) => SessionResponse.decode(b));
  }

  /** Calls a unary method with a raw body; resolves with the status it ended with (0 for OK). */
  unary(method: string, body: Buffer): Promise<{ code: number; details: string }> {
    return new Promise((resolve) => {
      this.client.makeUnaryRequest(`${SERVICE}${method}`, raw, raw, body, (err: ServiceError | null) =>
        resolve(err ? { code: err.code, details: err.details } : { code: 0, details: "" }),
      );
    });
  }

  /** Starts a Watch with a raw body; resolves with the first thing that happens: "data" or the status. */
  watch(body: Buffer): Promise<string | { code: number; details: string }> {
    return new Promise((resolve) => {
      const call = this.client.makeServerStreamRequest(`${SERVICE}Watch`, raw, raw, body);
      call.once("data", () => {
        resolve("data");
        call.cancel();
      });
      call.once("error", (err: ServiceError) => resolve({ code: err.code, details: err.details }));
    });
  }

  close(): void {
    this.client.close();
  }
}

/** The bytes of a well-formed Open with a 30 s TTL. */
export function openBytes(): Buffer {
  return Buffer.from(
    SessionRequest.encode({
      kind: {
        $case: "open",
        open: { clientName: "raw", ttl: { seconds: 30n, nanos: 0 }, resumeSessionId: "", resumeSecret: "", held: [] },
      },
    }).finish(),
  );
}
