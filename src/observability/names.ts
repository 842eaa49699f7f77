/*
 * Every instrument and attribute name in one place: docs/observability.md documents exactly these.
 * Names follow the OpenTelemetry semantic-convention style: a `sluice.` namespace, dots between
 * levels, snake_case within a level, units in UCUM (`s`, `{decision}`).
 */

export const METRICS = {
  decisions: 'sluice.decisions',
  units: 'sluice.units',
  nearLimit: 'sluice.near_limit',
  decisionErrors: 'sluice.decision.errors',
  degraded: 'sluice.degraded',
  degradedTransitions: 'sluice.degraded.transitions',
  storeDuration: 'sluice.store.duration',
  storeErrors: 'sluice.store.errors',
  batchSize: 'sluice.store.batch.size',
  leaseLocalHits: 'sluice.lease.local_hits',
  leaseRemoteCalls: 'sluice.lease.remote_calls',
  leaseCachedDenials: 'sluice.lease.cached_denials',
  leaseUnitsLeased: 'sluice.lease.units.leased',
  leaseUnitsReturned: 'sluice.lease.units.returned',
  leaseUnitsExpired: 'sluice.lease.units.expired',
  leaseUnitsHeld: 'sluice.lease.units.held',
  policyBreakerState: 'sluice.policy.breaker.state',
  policyBreakerOpens: 'sluice.policy.breaker.opens',
  policyFailures: 'sluice.policy.failures',
} as const;

export const ATTRIBUTES = {
  limit: 'sluice.limit',
  algorithm: 'sluice.algorithm',
  outcome: 'sluice.outcome',
  admitted: 'sluice.admitted',
  degradedReason: 'sluice.degraded.reason',
  failure: 'sluice.failure',
  label: 'sluice.label',
  transition: 'sluice.transition',
  operation: 'sluice.operation',
  errorKind: 'sluice.error.kind',
  breakerState: 'sluice.breaker.state',
  errorType: 'error.type',
  decisionCount: 'sluice.decision.count',
  allowedCount: 'sluice.decision.allowed',
  deniedCount: 'sluice.decision.denied',
} as const;

/** The meter's instrumentation scope, when `sluice/otel` gets its meter from a provider. */
export const SCOPE = 'sluice';
