/** One sample line of a Prometheus text exposition: `name{label="value",…} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The sample lines of a Prometheus text exposition (comments and blank lines skipped). */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] as string] = pair[2] as string;
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples called `name` whose labels include `labels`; undefined when there is none. */
export function sumOf(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  let total: number | undefined;
  for (const sample of samples) {
    if (sample.name !== name || !Object.entries(labels).every(([k, v]) => sample.labels[k] === v)) continue;
    total = (total ?? 0) + sample.value;
  }
  return total;
}

/**
 * The `q` quantile of the histogram `name` (every series summed by bucket), estimated as
 * PromQL's `histogram_quantile` does: linear within the bucket the rank falls in, the highest
 * finite bound when it falls in `+Inf`. Undefined without samples.
 */
export function quantileOf(samples: readonly Sample[], name: string, q: number): number | undefined {
  const buckets = new Map<number, number>();
  for (const sample of samples) {
    if (sample.name !== `${name}_bucket` || sample.labels.le === undefined) continue;
    const bound = Number(sample.labels.le); // '+Inf' → Infinity
    buckets.set(bound, (buckets.get(bound) ?? 0) + sample.value);
  }
  const sorted = [...buckets].sort(([a], [b]) => a - b);
  const total = sorted.at(-1)?.[1] ?? 0;
  if (total === 0) return undefined;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [bound, cumulative] of sorted) {
    if (cumulative >= rank) {
      if (bound === Number.POSITIVE_INFINITY) return lower;
      return lower + ((bound - lower) * (rank - below)) / (cumulative - below);
    }
    lower = bound;
    below = cumulative;
  }
  return lower;
}
