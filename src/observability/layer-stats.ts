import type { Attributes, Meter, Observable } from '@opentelemetry/api';
import type { LeaseStats } from '../lease/stats.js';
import type { FailureStats } from '../policy/with-failure-policy.js';
import { ATTRIBUTES as A, METRICS } from './names.js';

/** A layer of a limiter stack that counts what it does: a leased limiter, a failure policy. */
export interface StatsSource {
  stats(): object;
}

const BREAKER_STATES = ['closed', 'open', 'half-open'] as const;
const FAILURE_KINDS = [
  ['timeout', 'timeouts'],
  ['connection', 'connectionErrors'],
  ['script-error', 'scriptErrors'],
  ['breaker-open', 'breakerRejections'],
] as const;

const LEASE_FIELDS = [
  'localHits',
  'remoteCalls',
  'cachedDenials',
  'leasedUnits',
  'returnedUnits',
  'expiredUnits',
  'heldUnits',
] as const;

const isLease = (stats: object): stats is LeaseStats => 'localHits' in stats && 'leasedUnits' in stats;
const isPolicy = (stats: object): stats is FailureStats => 'breaker' in stats && 'breakerOpens' in stats;

/**
 * Reports the `stats()` of each source at collection (one `stats()` call per source per
 * collection, nothing per decision): lease counters from a leased limiter, breaker state and
 * failures from a failure policy. Sources of other shapes report nothing.
 */
export function observeLayerStats(meter: Meter, base: Attributes, sources: readonly StatsSource[]): void {
  if (sources.length === 0) return;
  const counter = (name: string, description: string, unit: string) =>
    meter.createObservableCounter(name, { description, unit });
  const gauge = (name: string, description: string, unit: string) =>
    meter.createObservableGauge(name, { description, unit });
  const lease = {
    localHits: counter(METRICS.leaseLocalHits, 'Requests admitted from leased units, without I/O.', '{decision}'),
    remoteCalls: counter(METRICS.leaseRemoteCalls, 'Calls the leasing layer made to the store.', '{call}'),
    cachedDenials: counter(METRICS.leaseCachedDenials, 'Requests denied locally from a cached refusal.', '{decision}'),
    leasedUnits: counter(METRICS.leaseUnitsLeased, 'Units taken from the store in leases.', '{unit}'),
    returnedUnits: counter(METRICS.leaseUnitsReturned, 'Leased units given back unspent.', '{unit}'),
    expiredUnits: counter(METRICS.leaseUnitsExpired, 'Leased units that expired unspent (stranded).', '{unit}'),
    heldUnits: gauge(METRICS.leaseUnitsHeld, 'Leased units held now, not yet spent or expired.', '{unit}'),
  };
  const policy = {
    breaker: gauge(METRICS.policyBreakerState, '1 for the breaker state now, 0 for the others.', '1'),
    opens: counter(METRICS.policyBreakerOpens, 'Times the circuit breaker opened.', '{open}'),
    failures: counter(METRICS.policyFailures, 'Store calls the failure policy answered for, by kind.', '{call}'),
  };
  const breakerAttributes = BREAKER_STATES.map((state) => ({ ...base, [A.breakerState]: state }));
  const failureAttributes = FAILURE_KINDS.map(([kind]) => ({ ...base, [A.errorKind]: kind }));
  const observables: Observable[] = [...Object.values(lease), ...Object.values(policy)];

  meter.addBatchObservableCallback((result) => {
    for (const source of sources) {
      const stats = source.stats();
      if (isLease(stats)) {
        for (const field of LEASE_FIELDS) result.observe(lease[field], stats[field], base);
      }
      if (isPolicy(stats)) {
        BREAKER_STATES.forEach((state, i) => {
          result.observe(policy.breaker, stats.breaker === state ? 1 : 0, breakerAttributes[i]);
        });
        result.observe(policy.opens, stats.breakerOpens, base);
        FAILURE_KINDS.forEach(([, field], i) => {
          result.observe(policy.failures, stats[field], failureAttributes[i]);
        });
      }
    }
  }, observables);
}
