/**
 * The remote's round-trip time as one leased limiter sees it, in ms of its clock: a smoothed
 * mean of the calls it times (TCP's SRTT, RFC 6298 §2: each sample moves the estimate an
 * eighth of the way), 0 until the first sample.
 */
export interface RoundTrip {
  readonly estimateMs: number;
  record(ms: number): void;
}

export function createRoundTrip(): RoundTrip {
  let estimateMs = 0;
  let sampled = false;
  return {
    get estimateMs() {
      return estimateMs;
    },
    record(ms) {
      estimateMs = sampled ? estimateMs + (ms - estimateMs) / 8 : ms;
      sampled = true;
    },
  };
}
