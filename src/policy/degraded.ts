import { blockedDecision } from '../admin.js';
import type { AlgorithmParams } from '../algorithms/types.js';
import type { Decision, DegradedReason, FailureMode } from '../decision.js';
import type { StoreUnavailableError } from '../errors.js';
import type { DegradedEvent, PolicySettings } from './options.js';
import { failClosed, failOpen } from './policies.js';
import type { PolicyCounters } from './stats.js';

/** What a degraded or shadowed answer needs: the settings, the counters, the wrapped limit. */
export interface PolicyContext {
  readonly settings: PolicySettings;
  readonly counts: PolicyCounters;
  /** The wrapped algorithm's limit. */
  readonly limit: number;
}

/** Why the store could not decide, and for which call. */
export interface Degradation {
  reason: DegradedReason;
  mode: FailureMode;
  key: string;
  cost: number;
  /** Whether the call spends (`limit`) or only reads (`peek`). */
  commit: boolean;
  /** Whether the call admits as many of `cost` as are held (`limit(key, { partial: true })`). */
  partial: boolean;
  /** The call's per-call params and the limit they make (the wrapped limit without them). */
  params?: AlgorithmParams;
  limit: number;
  error?: StoreUnavailableError;
}

/** The policy's answer for a call the store could not decide: marked degraded, counted, told. */
export function degrade(context: PolicyContext, degradation: Degradation): Decision {
  const { reason, mode } = degradation;
  const { decision, instances } = policyAnswer(context, degradation);
  decision.degraded = true;
  decision.degradedReason = reason;
  decision.failure = mode;
  if (decision.allowed) context.counts.degradedAllowed++;
  else context.counts.degradedDenied++;
  tell(context.settings, degradation, decision.allowed, instances);
  return decision;
}

function policyAnswer(
  { settings }: PolicyContext,
  { mode, key, cost, commit, partial, params, limit }: Degradation,
): { decision: Decision; instances?: number } {
  if (mode === 'open' || mode === 'closed') {
    const decision =
      mode === 'open' ? failOpen(limit, commit ? cost : 0) : failClosed(limit, cost, settings.breaker.retryInMs());
    // A partial request admits all of its cost or none: it still says how many, as the store would.
    if (partial) decision.admitted = decision.allowed ? cost : 0;
    return { decision };
  }
  const fallback = settings.fallback as NonNullable<PolicySettings['fallback']>;
  const local = fallback.current();
  const blockedMs = fallback.blocks.leftMs(key);
  if (blockedMs > 0) {
    // A block this process knows of denies as the store would, spending nothing locally; a peek
    // too says the key holds nothing until the block ends.
    const next = local.limiter.peekSync(key, { params });
    return { decision: blockedDecision(next, blockedMs, partial), instances: local.instances };
  }
  // The local share of the call's own numbers: the fallback's algorithm divides params too.
  const decision = commit
    ? local.limiter.limitSync(key, { cost, params, partial })
    : local.limiter.peekSync(key, { params });
  // Never possible on the local share, but possible once the store is back.
  if (decision.retryAfterMs === Number.POSITIVE_INFINITY && cost <= limit) {
    decision.retryAfterMs = settings.breaker.retryInMs();
  }
  return { decision, instances: local.instances };
}

function tell(settings: PolicySettings, degradation: Degradation, allowed: boolean, instances?: number): void {
  const { reason, mode, key, cost, error } = degradation;
  const { onDegraded } = settings;
  if (onDegraded) {
    const event: DegradedEvent = { reason, failure: mode, key, cost, allowed };
    if (error) event.error = error;
    if (instances !== undefined) event.instances = instances;
    swallow(() => onDegraded(event));
    return;
  }
  settings.warn(
    'SLUICE_DEGRADED',
    `Sluice: the store could not decide (${reason}); decisions are degraded to '${mode}'. ` +
      'Pass onDegraded to withFailurePolicy to observe them (onWarning: false silences this warning).',
  );
}

/** Shadow mode: a denial becomes an admission, counted and told; anything else is returned as is. */
export function shadowed(context: PolicyContext, key: string, cost: number, decision: Decision): Decision {
  const { shadow, onShadowDeny } = context.settings;
  if (!shadow || decision.allowed) return decision;
  context.counts.shadowDenied++;
  if (onShadowDeny) swallow(() => onShadowDeny({ key, cost, decision: { ...decision } }));
  return { ...decision, allowed: true, retryAfterMs: 0 };
}

function swallow(run: () => void): void {
  try {
    run();
  } catch {
    // A callback's bug must not change the decision.
  }
}
