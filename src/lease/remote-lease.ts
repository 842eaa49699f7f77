import type { AlgorithmParams } from '../algorithms/types.js';
import type { Decision } from '../decision.js';
import type { Limiter } from '../limiter.js';
import { type KeyState, observe, recordLease, type Waiter } from './key-state.js';
import { answer, expire } from './local-decision.js';
import type { RemoteModel } from './remote-model.js';
import type { Returns } from './returns.js';
import type { RoundTrip } from './round-trip.js';
import { nextLeaseSize } from './sizing.js';
import type { LeaseCounters } from './stats.js';

/** What taking a lease from the remote needs: the settings, the remote's model, the counters. */
export interface LeaseContext {
  readonly remote: Limiter;
  /** The per-call params every remote call of this lane carries (undefined: the remote's own). */
  readonly params: AlgorithmParams | undefined;
  readonly model: RemoteModel;
  readonly counters: LeaseCounters;
  readonly leaseSize: number;
  /** 0 when adaptive sizing is off. */
  readonly adaptiveDivisor: number;
  /**
   * How long a cached refusal is trusted without asking again (`returnIdleMs`, or forever). A
   * method, not a getter: a getter in an object literal puts it in V8's dictionary mode.
   */
  refusalTrustMs(): number;
  readonly returns: Returns;
  /** The remote's round-trip time, fed by every call this lane makes. */
  readonly roundTrip: RoundTrip;
  /** Whether a lease's units would expire before a round trip: then a call asks for its demand alone. */
  passesThrough(): boolean;
  /** Whole ms of the limiter's clock, for decisions. */
  nowMs(): number;
  /** The limiter's clock unrounded, for timing round trips. */
  clock(): number;
}

async function ask(context: LeaseContext, key: string, cost: number): Promise<Decision> {
  context.counters.remoteCalls++;
  const startedMs = context.clock();
  const reply = await context.remote.limit(
    key,
    context.params === undefined ? { cost } : { cost, params: context.params },
  );
  context.roundTrip.record(context.clock() - startedMs);
  return reply;
}

/**
 * How many requests at the front of the queue one remote call asks for: the longest run of
 * costs in 1..limit whose sum stays within the limit (more could never be granted at once).
 * Always at least the head, whose cost is in 1..limit here.
 */
function batchOf(queue: readonly Waiter[], limit: number): { size: number; demand: number } {
  let demand = 0;
  let size = 0;
  for (const { cost } of queue) {
    if (cost === 0 || demand + cost > limit) break;
    demand += cost;
    size++;
  }
  return { size, demand };
}

/**
 * One remote call for the requests at the head of the key's queue: asks for max(lease size, the
 * shortfall of every request queued now; the shortfall alone while passing through); when refused,
 * once more for the requests that fit in what the refusal says the remote holds (at least the
 * head's shortfall). Resolves to the decisions of
 * the requests it served, in queue order: the head and those behind it the grant covers, the head
 * alone for a refusal, a report or a degraded reply, or none when the head must ask again (the
 * older units a lease was to top up expired meanwhile, or a refusal did not cover the head).
 */
export async function leaseFor(
  context: LeaseContext,
  key: string,
  state: KeyState,
  queue: readonly Waiter[],
): Promise<readonly Decision[]> {
  const { model, counters, nowMs, leaseSize, adaptiveDivisor } = context;
  const cost = (queue[0] as Waiter).cost;
  let askedAtMs = nowMs();
  expire(state, askedAtMs, model, counters);
  // Held units that cover the head (or any, after an invalidation) need no lease: only the word
  // that the key is not blocked (a block no longer trusted, or a change heard since the reply).
  if (state.units > 0 && (!state.anchored || (cost > 0 && cost <= state.units)))
    return confirm(context, key, state, cost, askedAtMs);
  if (cost === 0 || cost > model.limit) return [await report(context, key, state, cost, askedAtMs)];
  const batch = batchOf(queue, model.limit);
  // Positive: the head's cost exceeds the held units here.
  const shortfall = batch.demand - state.units;
  const heard = state.anchored ? model.remainingAt(state, askedAtMs) : undefined;
  // Asking again before a refusal's retry-after only looks for units other instances returned:
  // the shortfall, not a lease the remote said it cannot grant.
  const probing = state.deniedUnits > 0 && askedAtMs < state.deniedUntilMs;
  // Spare units that would expire on the way are not asked for: the call is for the demand alone.
  const exact = probing || context.passesThrough();
  let units = exact
    ? shortfall
    : Math.max(
        Math.min(nextLeaseSize(leaseSize, adaptiveDivisor, heard), spareOf(context, state, askedAtMs)),
        shortfall,
      );
  const { epoch, resets, rewards } = state;
  let reply = await ask(context, key, units);
  if (!reply.allowed && !reply.degraded && units > cost - state.units) {
    // A lease of 30 against 10 left must not refuse a request for 1.
    askedAtMs = nowMs();
    expire(state, askedAtMs, model, counters);
    const headShortfall = cost - state.units;
    // An exact model's refusal says what the remote holds: ask for the requests that fit, whole.
    // A probe asks for the head alone, so that a refusal racing other spenders ends in a decision.
    const fits =
      probing || !model.exact ? 0 : batchOf(queue, Math.min(model.limit, reply.remaining + state.units)).demand;
    units = Math.max(headShortfall, fits - state.units);
    reply = await ask(context, key, units);
  }
  if (reply.degraded) return [reply];
  observe(state, askedAtMs, reply);
  const covered = units <= cost - state.units;
  // An invalidation heard while the call was out may postdate the reply: keep no refusal from it.
  if (state.epoch !== epoch) {
    const after = state.resets !== resets ? 'reset' : state.rewards !== rewards ? 'reward' : undefined;
    return unheld(context, key, state, queue, batch.size, askedAtMs, units, reply, covered, after);
  }
  if (!reply.allowed) {
    const refusal = refused(context, state, askedAtMs, units, reply);
    return covered ? [refusal] : [];
  }
  return granted(context, key, state, queue, batch.size, askedAtMs, units, reply);
}

/**
 * A lease's size when the key dropped units at lane changes that the remote has not regenerated
 * yet: what is left of one lease, so that the units a later change can drop stay within it.
 */
function spareOf(context: LeaseContext, state: KeyState, atMs: number): number {
  return atMs < state.droppedUntilMs ? context.leaseSize - state.droppedUnits : context.leaseSize;
}

/**
 * A reply asked for before an invalidation answers its requests and leaves no refusal or block
 * behind. Its spare units are what the invalidation makes of held units (`forget`): dropped after
 * a reset (admissions before it no longer count), given back after a reward, else kept, and the
 * key asks the remote once (cost 0) whether it is blocked before they are spent.
 */
function unheld(
  context: LeaseContext,
  key: string,
  state: KeyState,
  queue: readonly Waiter[],
  size: number,
  askedAtMs: number,
  units: number,
  reply: Decision,
  covered: boolean,
  after: 'reset' | 'reward' | undefined,
): readonly Decision[] {
  if (!reply.allowed) {
    if (!covered) return [];
    return [{ ...answer(context.model, state, askedAtMs, false, reply.retryAfterMs), ...blockOf(reply) }];
  }
  const decisions = granted(context, key, state, queue, size, askedAtMs, units, reply);
  if (after === 'reset') {
    context.counters.expiredUnits += state.units;
    state.units = 0;
  } else if (after === 'reward') void context.returns.takeBack(key, state);
  state.anchored = false;
  return decisions;
}

function blockOf(reply: Decision): Partial<Decision> {
  return reply.reason === 'blocked' ? { remaining: 0, reason: 'blocked' } : {};
}

/**
 * Units held across an invalidation that left them spent (a block, an unblock, a reward): one
 * cost-0 call asks the remote whether the key is blocked before they are spent again. No decision
 * when the held units do not cover the request: the head then leases as usual.
 */
async function confirm(
  context: LeaseContext,
  key: string,
  state: KeyState,
  cost: number,
  askedAtMs: number,
): Promise<readonly Decision[]> {
  const { epoch } = state;
  const reply = await ask(context, key, 0);
  if (reply.degraded) return [reply];
  observe(state, askedAtMs, reply);
  if (state.epoch !== epoch) return [];
  if (reply.reason === 'blocked') return [refused(context, state, askedAtMs, Math.max(1, cost), reply)];
  state.blockedUntilMs = 0;
  const atMs = context.nowMs();
  expire(state, atMs, context.model, context.counters);
  if (cost > state.units) return [];
  state.units -= cost;
  context.counters.spentUnits += cost;
  context.counters.localHits++;
  return [answer(context.model, state, atMs, true, 0)];
}

// Nothing to lease (cost 0, or above the limit): the remote reports, this instance listens
// (and passes on a block, as the remote would).
async function report(
  context: LeaseContext,
  key: string,
  state: KeyState,
  cost: number,
  askedAtMs: number,
): Promise<Decision> {
  const reply = await ask(context, key, cost);
  if (reply.degraded) return reply;
  observe(state, askedAtMs, reply);
  return { ...answer(context.model, state, askedAtMs, reply.allowed, reply.retryAfterMs), ...blockOf(reply) };
}

// Refused twice: the refusal is cached until the remote's retry-after (trusted for at most refusalTrustMs).
function refused(context: LeaseContext, state: KeyState, askedAtMs: number, units: number, reply: Decision): Decision {
  context.counters.refusals++;
  state.deniedUnits = units;
  state.deniedUntilMs = askedAtMs + reply.retryAfterMs;
  state.trustRefusalUntilMs = askedAtMs + Math.min(reply.retryAfterMs, context.refusalTrustMs());
  // Held units stay spent through a block; the local decision denies before it spends them.
  if (reply.reason === 'blocked') state.blockedUntilMs = state.deniedUntilMs;
  return { ...answer(context.model, state, askedAtMs, false, reply.retryAfterMs), ...blockOf(reply) };
}

/**
 * A grant of `units` for the first `size` requests of the queue. The remote admitted them at the
 * time it was asked, so the requests it was asked for spend them there, in order, older held
 * units first (what stays held is the latest slots). None when the older units it was to top up
 * expired meanwhile and the head is not covered: the new units are kept and the head asks again.
 */
function granted(
  context: LeaseContext,
  key: string,
  state: KeyState,
  queue: readonly Waiter[],
  size: number,
  askedAtMs: number,
  units: number,
  reply: Decision,
): readonly Decision[] {
  const { model, counters } = context;
  counters.leases++;
  counters.leasedUnits += units;
  expire(state, context.nowMs(), model, counters);
  if (state.units + units < (queue[0] as Waiter).cost) {
    counters.expiredUnits += state.units;
    state.units = 0;
  }
  recordLease(state, askedAtMs, units, reply.resetAfterMs, model.intervalMs);
  const decisions: Decision[] = [];
  for (let i = 0; i < size; i++) {
    const { cost } = queue[i] as Waiter;
    if (cost > state.units) break;
    state.units -= cost;
    counters.spentUnits += cost;
    // The head took the lease; the requests queued behind it are served from its units.
    if (i > 0) counters.localHits++;
    decisions.push(answer(model, state, askedAtMs, true, 0));
  }
  if (decisions.length > 0 && context.adaptiveDivisor > 0 && context.remote.refund !== undefined) {
    trimToShare(context, key, state, units, reply);
  }
  return decisions;
}

// What this instance heard before leasing may be stale; the reply is not. Keep no more than a
// divisor-th of what the remote held before this lease, and give the rest back.
function trimToShare(context: LeaseContext, key: string, state: KeyState, units: number, reply: Decision): void {
  const excess = state.units - Math.floor((reply.remaining + units) / context.adaptiveDivisor);
  if (excess > 0) {
    state.remaining += excess;
    void context.returns.trim(key, state, excess);
  }
}
