/*
 * Redis Cluster's key → hash slot mapping: CRC16-XMODEM (poly 0x1021, init 0) of the key's
 * hash tag, modulo 16384. ioredis keeps its copy (`cluster-key-slot`) private, node-redis
 * another, and the core has no runtime dependencies, so the 256-entry table is built here.
 */

/** Slots in a Redis Cluster. */
export const CLUSTER_SLOTS = 16384;

const TABLE = new Uint16Array(256);
for (let byte = 0; byte < 256; byte++) {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
  TABLE[byte] = crc & 0xffff;
}

/**
 * The hash slot Redis Cluster assigns `key` (what `CLUSTER KEYSLOT` answers): only the part
 * between the first `{` and the next `}` counts when that part is non-empty.
 * @example
 * ```ts
 * import { keySlot } from 'sluice/redis';
 *
 * keySlot('{user:42}:minute') === keySlot('{user:42}:day'); // true: only the hash tag counts
 * ```
 */
export function keySlot(key: string): number {
  const bytes = Buffer.from(key, 'utf8');
  let start = 0;
  let end = bytes.length;
  const open = bytes.indexOf(0x7b);
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) {
      start = open + 1;
      end = close;
    }
  }
  let crc = 0;
  for (let i = start; i < end; i++) {
    crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ (bytes[i] as number)) & 0xff] as number);
  }
  return crc % CLUSTER_SLOTS;
}

const tags = new Map<number, string>();

/**
 * A short brace-free string whose slot is `slot`, so `{tag}` routes any client to that slot.
 * Found by counting in base 36 (≈ 16,384 tries the first time a slot is asked for), then kept.
 */
export function hashTagForSlot(slot: number): string {
  let tag = tags.get(slot);
  for (let n = 0; tag === undefined; n++) {
    const candidate = n.toString(36);
    if (keySlot(candidate) === slot) tag = candidate;
  }
  tags.set(slot, tag);
  return tag;
}
