/** How the demo's requests are spread over the instances: request i goes to `instanceFor(i, n)`. */
export interface LoadPattern {
  readonly name: string;
  /** How the table's title describes it. */
  readonly label: string;
  instanceFor(request: number, instances: number): number;
  /** A pause of `ms` before request `before(n)`. */
  readonly pause?: { before(instances: number): number; readonly ms: number };
}

/** Requests per quiet instance in the skewed load (seed 000: "two instances get 5 requests"). */
const QUIET_REQUESTS = 5;

/** The load patterns, in table order. */
export const loadPatterns: readonly LoadPattern[] = [
  {
    name: 'round-robin',
    label: 'round-robin',
    instanceFor: (request, instances) => request % instances,
  },
  {
    // After the quiet instances stop, a pause long enough for their idle leases to be returned
    // (RETURN_IDLE_MS plus the return timer's period, several times over), so the rows with
    // return show the same counts however fast this machine sends requests.
    name: 'skewed',
    label: `skewed: round-robin until every instance had ${QUIET_REQUESTS} requests, then all but the last go quiet`,
    instanceFor: (request, instances) => (request < QUIET_REQUESTS * instances ? request % instances : instances - 1),
    pause: { before: (instances) => QUIET_REQUESTS * instances, ms: 1000 },
  },
];

/** The load pattern called `name`. @throws {Error} naming the known patterns when there is none. */
export function findLoad(name: string): LoadPattern {
  const load = loadPatterns.find((each) => each.name === name);
  if (load) return load;
  throw new Error(`unknown load '${name}'; known: ${loadPatterns.map((each) => each.name).join(', ')}`);
}
