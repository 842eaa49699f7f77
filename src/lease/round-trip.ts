/**
 * The remote's round-trip time as one leased limiter sees it, in ms of its clock: a smoothed
 * mean of the calls it times (TCP's SRTT, RFC 6298 §2: each sample moves the estimate an
 * eighth of the way), 0 until the first sample.
 */
export interface RoundTrip {
  /** A method, not a getter: a getter in an object literal puts it in V8's dictionary mode. */
  estimateMs(): number;
  record(ms: number): void;
}

export function createRoundTrip(): RoundTrip {
  let estimateMs = 0;
  let sampled = false;
  return {
    estimateMs: () => estimateMs,
    record(ms) {
      estimateMs = sampled ? estimateMs + (ms - estimateMs) / 8 : ms;
      sampled = true;
    },
  };
}
