/**
 * How many units to lease next (before the shortfall rule, which may ask for more).
 *
 * Fixed: always `leaseSize`. Adaptive: full-size leases while the remote held at least
 * `divisor` leases' worth when this instance last heard from it; below that, a lease is
 * ⌊remaining / divisor⌋, down to 1, so the leases taken near exhaustion are small and so is what
 * they can strand. An instance that leased while the remote held r units therefore strands at
 * most max(0, min(leaseSize, ⌊r / divisor⌋) − 1) of it. A key never heard from gets a full lease.
 *
 * @param remaining the remote's remaining as last heard (and regenerated since), or undefined
 */
export function nextLeaseSize(leaseSize: number, divisor: number, remaining: number | undefined): number {
  if (divisor === 0 || remaining === undefined) return leaseSize;
  return Math.max(1, Math.min(leaseSize, Math.floor(remaining / divisor)));
}
