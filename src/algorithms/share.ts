/** One instance's share of a count: at least 1, so every instance can admit something. */
export const share = (units: number, instances: number): number => Math.max(1, Math.floor(units / instances));
