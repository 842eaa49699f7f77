/**
 * Measures when this process could not run at all (CPU starvation on a loaded machine, GC, a
 * long task): a timer ticks every `periodMs`, and a gap longer than that is a stall. No code in
 * the process, a deadline timer included, can answer during a stall, so the fault tests judge
 * a call's latency net of the stalls it lived through.
 */
export function stallMeter(periodMs = 5) {
  const ticks: number[] = [performance.now()];
  const timer = setInterval(() => ticks.push(performance.now()), periodMs);
  return {
    stop: () => clearInterval(timer),
    /** Milliseconds of stall within [from, to]. */
    stalledMs(from: number, to: number): number {
      let total = 0;
      for (let k = 1; k < ticks.length; k++) {
        const a = ticks[k - 1] as number;
        const b = ticks[k] as number;
        if (b <= from || a >= to) continue;
        const overlap = Math.min(b, to) - Math.max(a, from);
        total += Math.min(overlap, Math.max(0, b - a - periodMs));
      }
      return total;
    },
  };
}
