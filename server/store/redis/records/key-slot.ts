/**
 * The Redis Cluster slot of a key: CRC16 (XMODEM: polynomial 0x1021, initial 0) of its hash tag — the
 * text between the first `{` and the next `}` when that is not empty — or of the whole key, modulo
 * 16384 (the Cluster specification's key distribution model).
 */
export function keySlot(key: string): number {
  const bytes = Buffer.from(key, "utf8");
  const open = bytes.indexOf(0x7b);
  let part = bytes;
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) part = bytes.subarray(open + 1, close);
  }
  return crc16(part) % 16384;
}

/** The first key (by index) whose slot differs from the first key's, with both slots; undefined when all share one. */
export function crossSlot(keys: string[]): { indexes: [number, number]; slots: [number, number] } | undefined {
  const slots = keys.map(keySlot);
  const other = slots.findIndex((s) => s !== slots[0]);
  return other > 0 ? { indexes: [0, other], slots: [slots[0], slots[other]] } : undefined;
}

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}
