const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const FRAME_HEADER_BYTES = 9;
const DATA = 0x0;
const PADDED = 0x8;
const MESSAGE_PREFIX_BYTES = 5;

/** What one direction of an HTTP/2 connection carried, as gRPC sees it. */
export interface GrpcTraffic {
  /** Every byte on the wire, framing included. */
  bytes: number;
  /** HTTP/2 frames of any type (DATA, HEADERS, PING, WINDOW_UPDATE, SETTINGS…). */
  frames: number;
  /** Complete gRPC messages in the DATA frames, over all streams. */
  messages: number;
  /** Their encoded bytes (without the 5-byte length prefix gRPC puts before each). */
  messageBytes: number;
}

/**
 * Reads one direction of a cleartext HTTP/2 connection as it passes (the client's direction starts
 * with the connection preface) and counts frames and the gRPC messages inside DATA frames, however
 * HTTP/2 split or joined them: each stream's DATA payload is read as length-prefixed messages.
 */
export class GrpcFrameMeter {
  private pending: Buffer = Buffer.alloc(0);
  private prefaceLeft: number;
  /** Per stream: the bytes of an unfinished message prefix, or how many message bytes are still to come. */
  private readonly streams = new Map<number, { prefix: Buffer; bodyLeft: number }>();

  /** `traffic` is where the counts add up (one total may take several connections' meters). */
  constructor(
    fromClient: boolean,
    readonly traffic: GrpcTraffic = { bytes: 0, frames: 0, messages: 0, messageBytes: 0 },
  ) {
    this.prefaceLeft = fromClient ? PREFACE.length : 0;
  }

  /** Takes the next bytes of this direction. */
  push(chunk: Buffer): void {
    this.traffic.bytes += chunk.length;
    let bytes = chunk;
    if (this.prefaceLeft > 0) {
      const skipped = Math.min(this.prefaceLeft, bytes.length);
      this.prefaceLeft -= skipped;
      bytes = bytes.subarray(skipped);
    }
    this.pending = this.pending.length ? Buffer.concat([this.pending, bytes]) : bytes;
    while (this.pending.length >= FRAME_HEADER_BYTES) {
      const length = this.pending.readUIntBE(0, 3);
      if (this.pending.length < FRAME_HEADER_BYTES + length) break;
      const type = this.pending[3];
      const flags = this.pending[4];
      const stream = this.pending.readUInt32BE(5) & 0x7fffffff;
      let payload = this.pending.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + length);
      this.pending = this.pending.subarray(FRAME_HEADER_BYTES + length);
      this.traffic.frames += 1;
      if (type !== DATA) continue;
      if (flags & PADDED) payload = payload.subarray(1, payload.length - payload[0]);
      this.data(stream, payload);
    }
  }

  private data(stream: number, payload: Buffer): void {
    let state = this.streams.get(stream);
    if (!state) {
      state = { prefix: Buffer.alloc(0), bodyLeft: 0 };
      this.streams.set(stream, state);
    }
    let rest = payload;
    while (rest.length > 0) {
      if (state.bodyLeft > 0) {
        const taken = Math.min(state.bodyLeft, rest.length);
        state.bodyLeft -= taken;
        rest = rest.subarray(taken);
        continue;
      }
      const need = MESSAGE_PREFIX_BYTES - state.prefix.length;
      state.prefix = Buffer.concat([state.prefix, rest.subarray(0, need)]);
      rest = rest.subarray(need);
      if (state.prefix.length < MESSAGE_PREFIX_BYTES) return;
      const length = state.prefix.readUInt32BE(1);
      state.prefix = Buffer.alloc(0);
      state.bodyLeft = length;
      this.traffic.messages += 1;
      this.traffic.messageBytes += length;
    }
  }
}
