import type { Decision } from '../decision.js';
import type { Limiter } from '../limiter.js';
import { MAX_TIMER_MS } from '../validate.js';
import { AcquireTimeoutError, CostOverLimitError } from './errors.js';
import { type Linked, WaitList } from './wait-list.js';

/** One call of `acquire` waiting for its units. */
export interface Waiter extends Linked<Waiter> {
  /** Units asked for. */
  readonly units: number;
  /** Units charged for it: `units` times the key's learned scale, at most the limit. */
  cost: number;
  /** Local monotonic ms after which it must not be admitted; `Infinity` without `maxWaitMs`. */
  readonly deadlineMs: number;
  readonly resolve: (decision: Decision) => void;
  readonly reject: (error: unknown) => void;
  /** Set once the promise is settled or the waiter was taken off the queue by an abort. */
  done: boolean;
  /** The deadline timer while queued; the slot timer while booked (paced). */
  timer: NodeJS.Timeout | undefined;
  /** Paced: the admitting decision and its slot. */
  booking: { decision: Decision; slot: Slot } | undefined;
  /** Detaches the abort listener. */
  detach: () => void;
}

/**
 * When a unit may be released (local ms): not before `atMs` (see `slotOf`); not after
 * `latestMs`, the earliest the store may have decided plus the lateness allowed. Later, the slot is
 * given up: a process that stalled must not send its units on top of the next slots.
 */
export interface Slot {
  atMs: number;
  latestMs: number;
}

/** What every key queue of one acquirer shares. */
export interface QueueContext {
  readonly limiter: Limiter;
  readonly now: () => number;
  /** Pacing: the emission interval (ms) each unit's slot is spread by; 0 when not paced. */
  readonly paceIntervalMs: number;
  /** Pacing: how far ahead (ms) the GCRA schedule can be booked (burst × emission interval). */
  readonly horizonMs: number;
  /** Pacing: units a wake-up waits to find free, so that each remote call books a batch of slots. */
  readonly refillUnits: number;
  /** Pacing: how late (ms) after its slot a unit may still be released. */
  readonly maxLatenessMs: number;
  /** Extra wait after a denial, drawn per wake-up, so a fleet's processes do not all call at the refill. */
  readonly jitterMs: () => number;
  /**
   * Reads the fleet-wide pause of a key (ms left, at most the acquirer's `maxPauseMs`), once per
   * wake-up; undefined when the store could not answer. Absent without a pause store.
   */
  readonly pausedForMs: ((key: string) => Promise<number | undefined>) | undefined;
  /**
   * Least time (ms) between two reads of a key's pause. Paced, a quarter of the booking horizon:
   * slots already booked up to the horizon are released without a read anyway, and the processes
   * of a fleet each wake about twice per batch, so reading every wake-up doubled the calls.
   */
  readonly pauseReadIntervalMs: number;
  /** Called once a queue holds no waiter, no booking and no timer. */
  readonly onIdle: (queue: KeyQueue) => void;
}

/**
 * The waiters of one key in this process, first in first out. At most one remote call is in
 * flight per key: a wake-up asks for the head's units; an admission hands them over and asks
 * for the next head at once; a denial sets one timer from the store's `retryAfterMs`.
 */
export interface KeyQueue {
  readonly key: string;
  readonly waiting: WaitList<Waiter>;
  readonly booked: Set<Waiter>;
  /** Local time before which nothing is asked for: a learned pause. */
  pausedUntilMs: number;
  /**
   * Whether the pause store holds the local pause (it was read there, or written and
   * acknowledged), so that a read finding no pause there (another process resumed the key) lifts it.
   */
  pauseShared: boolean;
  /** Local time from which the pause store is read again. */
  pauseReadDueMs: number;
  /** Local time from which the store said the head could pass (last denial). */
  availableAtMs: number;
  /** Paced: local time at which the store's booked schedule ends (GCRA's TAT), as last seen. */
  scheduleEndMs: number;
  /** Paced: the earliest local time the next booked waiter may be released (the last release's slot ends). */
  nextReleaseMs: number;
  calling: boolean;
  wake: NodeJS.Timeout | undefined;
}

export function createKeyQueue(key: string): KeyQueue {
  return {
    key,
    waiting: new WaitList(),
    booked: new Set(),
    pausedUntilMs: 0,
    pauseShared: false,
    pauseReadDueMs: 0,
    availableAtMs: 0,
    scheduleEndMs: 0,
    nextReleaseMs: 0,
    calling: false,
    wake: undefined,
  };
}

/** Settles a waiter once, clearing its timer and abort listener. */
export function finish(waiter: Waiter, outcome: { decision: Decision } | { error: unknown }): void {
  if (waiter.done) return;
  waiter.done = true;
  clearTimeout(waiter.timer);
  waiter.timer = undefined;
  waiter.detach();
  if ('decision' in outcome) waiter.resolve(outcome.decision);
  else waiter.reject(outcome.error);
}

/** Takes a waiter off the queue (abort, deadline) and lets an empty queue go. */
export function withdraw(ctx: QueueContext, queue: KeyQueue, waiter: Waiter, error: unknown): void {
  queue.waiting.remove(waiter);
  if (waiter.booking !== undefined) {
    queue.booked.delete(waiter);
    clearTimeout(waiter.timer);
    const { booking } = waiter;
    waiter.booking = undefined;
    finish(waiter, { error });
    handOver(ctx, queue, booking.decision, waiter.cost, booking.slot);
  } else {
    finish(waiter, { error });
  }
  settle(ctx, queue);
}

/** Clears the wake-up timer of a queue nobody waits on, and reports it idle. */
export function settle(ctx: QueueContext, queue: KeyQueue): void {
  if (queue.waiting.size > 0 || queue.calling) return;
  clearTimeout(queue.wake);
  queue.wake = undefined;
  if (queue.booked.size === 0) ctx.onIdle(queue);
}

/** Starts a wake-up now unless one is in flight or timed. */
export function pump(ctx: QueueContext, queue: KeyQueue): void {
  if (queue.calling || queue.wake !== undefined) return;
  queue.calling = true;
  void drainQueue(ctx, queue);
}

/**
 * Moves this key's local pause to `untilMs` (if later). Slots booked inside the pause are given
 * up: their waiters go back to the head of the line and book again after it, where the store
 * spaces them across the fleet (shifting the slots instead would bunch every process's first
 * slot at the pause's end). The slots given up stay spent, as the upstream refused them anyway.
 */
export function pauseQueue(ctx: QueueContext, queue: KeyQueue, untilMs: number): void {
  if (untilMs <= queue.pausedUntilMs) return;
  queue.pausedUntilMs = untilMs;
  forfeitBooked(ctx, queue, (slotMs) => slotMs < untilMs);
}

/**
 * What the pause store said (ms left): a longer pause than this process knows holds it; no pause
 * there lifts a local pause the store held (another process resumed the key), but not one this
 * process could not share (the store then never acknowledged it).
 */
function readPause(ctx: QueueContext, queue: KeyQueue, pausedMs: number): void {
  const nowMs = ctx.now();
  if (pausedMs > 0) {
    // Redis still holds a key in its last millisecond (PTTL 0): the pause ends one later.
    const untilMs = nowMs + pausedMs + 1;
    if (untilMs >= queue.pausedUntilMs) queue.pauseShared = true;
    pauseQueue(ctx, queue, untilMs);
  } else if (queue.pauseShared && queue.pausedUntilMs > nowMs) {
    queue.pausedUntilMs = 0;
    queue.pauseShared = false;
  }
}

/**
 * The key's calls now cost `costOf(units)` (an upstream announced a lower rate): queued waiters
 * are repriced, and booked ones give up their slots (booked at the old spacing) to book again.
 */
export function repriceQueue(ctx: QueueContext, queue: KeyQueue, costOf: (units: number) => number): void {
  forfeitBooked(ctx, queue, () => true);
  for (let waiter = queue.waiting.head; waiter !== undefined; waiter = waiter.next) waiter.cost = costOf(waiter.units);
}

function forfeitBooked(ctx: QueueContext, queue: KeyQueue, forfeits: (slotMs: number) => boolean): void {
  const forfeited = [...queue.booked].filter((waiter) => waiter.booking && forfeits(waiter.booking.slot.atMs));
  for (const waiter of forfeited) unbook(ctx, queue, waiter);
  queue.waiting.unshiftAll(forfeited);
}

/** A booked waiter gives its slot up (it stays spent) and waits as it did before booking. */
function unbook(ctx: QueueContext, queue: KeyQueue, waiter: Waiter): void {
  queue.booked.delete(waiter);
  waiter.booking = undefined;
  clearTimeout(waiter.timer);
  armDeadline(ctx, queue, waiter);
}

/**
 * A waiter still queued at its deadline leaves, whatever the store said before. A deadline past
 * setTimeout's range (which would fire at once, with a `TimeoutOverflowWarning`) is reached in
 * steps of the longest delay.
 */
export function armDeadline(ctx: QueueContext, queue: KeyQueue, waiter: Waiter): void {
  if (!Number.isFinite(waiter.deadlineMs)) return;
  const leftMs = waiter.deadlineMs - ctx.now();
  waiter.timer = setTimeout(
    () =>
      leftMs > MAX_TIMER_MS
        ? armDeadline(ctx, queue, waiter)
        : timeOut(ctx, queue, waiter, Math.max(0, queue.availableAtMs - ctx.now())),
    timerDelayMs(leftMs),
  );
}

/** A delay setTimeout takes as it is: whole ms in 0..2^31 − 1 (longer would fire at once). An early wake-up just asks again. */
export function timerDelayMs(delayMs: number): number {
  return Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(delayMs)));
}

/**
 * Longest sleep (ms) of a paused or blocked key with waiters before it looks again, so that a
 * pause lifted elsewhere (`resume`, `unblock`) reaches this process within it.
 */
export const PAUSE_RECHECK_MS = 1000;

function scheduleWake(ctx: QueueContext, queue: KeyQueue, delayMs: number): void {
  clearTimeout(queue.wake);
  queue.wake = setTimeout(() => {
    queue.wake = undefined;
    pump(ctx, queue);
  }, timerDelayMs(delayMs));
}

/** One wake-up: admits heads while the store admits them, then sleeps until the store's retry. */
async function drainQueue(ctx: QueueContext, queue: KeyQueue): Promise<void> {
  try {
    await admitWhileAllowed(ctx, queue);
  } finally {
    queue.calling = false;
    // A waiter that arrived while this wake-up was ending found it busy: it is served now.
    if (queue.waiting.size > 0 && queue.wake === undefined) pump(ctx, queue);
    else settle(ctx, queue);
  }
}

async function admitWhileAllowed(ctx: QueueContext, queue: KeyQueue): Promise<void> {
  // Paused, every wake-up reads (they are PAUSE_RECHECK_MS apart): it is how a resume elsewhere arrives.
  const due = ctx.now() >= queue.pauseReadDueMs || queue.pausedUntilMs > ctx.now();
  if (ctx.pausedForMs !== undefined && queue.waiting.size > 0 && due) {
    queue.pauseReadDueMs = ctx.now() + ctx.pauseReadIntervalMs;
    const pausedMs = await ctx.pausedForMs(queue.key);
    if (pausedMs !== undefined) readPause(ctx, queue, pausedMs);
  }
  for (;;) {
    const head = queue.waiting.head;
    if (head === undefined) return;
    const nowMs = ctx.now();
    if (queue.pausedUntilMs > nowMs) {
      // With a pause store, look again within PAUSE_RECHECK_MS: another process may have resumed the key.
      const recheckMs = ctx.pausedForMs === undefined ? Number.POSITIVE_INFINITY : PAUSE_RECHECK_MS;
      return scheduleWake(ctx, queue, Math.min(queue.pausedUntilMs - nowMs, recheckMs));
    }
    if (ctx.paceIntervalMs > 0 && queue.scheduleEndMs - head.cost * ctx.paceIntervalMs > head.deadlineMs) {
      // The booked schedule only grows, so this slot is already later than the waiter can wait.
      timeOut(ctx, queue, head, queue.scheduleEndMs - nowMs);
      continue;
    }
    const batch = batchOf(ctx, queue);
    const cost = unitsOf(batch);
    const askedMs = ctx.now();
    let decision: Decision;
    try {
      decision = await ctx.limiter.limit(queue.key, { cost });
    } catch (error) {
      // The store could not decide: the head gets the error, the next one gets a fresh call.
      queue.waiting.remove(head);
      finish(head, { error });
      continue;
    }
    const repliedMs = ctx.now();
    if (ctx.paceIntervalMs > 0) queue.scheduleEndMs = repliedMs + decision.resetAfterMs;
    if (decision.allowed) {
      admitBatch(ctx, queue, batch, decision, slotOf(ctx, decision, cost, askedMs, repliedMs));
      const nextUnits = ctx.paceIntervalMs > 0 && queue.waiting.size > 0 ? unitsOf(batchOf(ctx, queue)) : 0;
      if (decision.remaining < nextUnits) {
        // Known without asking: the next batch does not fit. Sleep until a batch of slots is free again.
        return scheduleWake(ctx, queue, refillWaitMs(ctx, decision, nextUnits) + ctx.jitterMs());
      }
      continue;
    }
    if (!Number.isFinite(decision.retryAfterMs) && batch.length === 1) {
      queue.waiting.remove(head);
      finish(head, { error: new CostOverLimitError(`cost ${head.cost} can never be admitted on '${queue.key}'`) });
      continue;
    }
    // GCRA: each unit fewer fits one emission interval sooner, so the head alone could pass this early.
    const headRetryMs = Math.max(0, decision.retryAfterMs - (cost - head.cost) * ctx.paceIntervalMs);
    queue.availableAtMs = repliedMs + headRetryMs;
    // Nobody behind the head can pass before it: whoever cannot wait that long is told now.
    for (const waiter of queue.waiting.toArray()) {
      if (waiter.deadlineMs < queue.availableAtMs) timeOut(ctx, queue, waiter, headRetryMs);
    }
    if (queue.waiting.size === 0) return;
    const waitMs = ctx.paceIntervalMs > 0 ? refillWaitMs(ctx, decision, cost) : decision.retryAfterMs;
    // A block can be lifted (`unblock`) before it ends: a blocked key looks again as a paused one does.
    const recheckMs = decision.reason === 'blocked' ? PAUSE_RECHECK_MS : Number.POSITIVE_INFINITY;
    return scheduleWake(ctx, queue, Math.min(waitMs + ctx.jitterMs(), recheckMs));
  }
}

/**
 * The waiters one remote call asks for. Paced: the leading waiters whose units fit in a batch
 * (`refillUnits`, at least the head's), booked by one call as consecutive slots, so the fleet
 * makes one call per batch rather than one per waiter. Not paced: the head alone (a batch would
 * wait for its last unit and then release them all at once).
 */
function batchOf(ctx: QueueContext, queue: KeyQueue): Waiter[] {
  const head = queue.waiting.head as Waiter;
  if (ctx.paceIntervalMs === 0) return [head];
  const batch = [head];
  let units = head.cost;
  for (let waiter = head.next; waiter !== undefined; waiter = waiter.next) {
    if (units + waiter.cost > ctx.refillUnits) break;
    batch.push(waiter);
    units += waiter.cost;
  }
  return batch;
}

function unitsOf(batch: readonly Waiter[]): number {
  return batch.reduce((sum, waiter) => sum + waiter.cost, 0);
}

/**
 * Hands an admitted batch's consecutive slots to its waiters in order. A waiter that left while
 * the call was in flight passes its slot on (to the next queued waiter it fits, or back); the
 * batch leaves the queue first, so none of it inherits a slot besides its own.
 */
function admitBatch(ctx: QueueContext, queue: KeyQueue, batch: Waiter[], decision: Decision, first: Slot): void {
  const present = new Set(batch.filter((waiter) => !waiter.done));
  for (const waiter of present) queue.waiting.remove(waiter);
  let offsetMs = 0;
  for (const waiter of batch) {
    const slot = { atMs: first.atMs + offsetMs, latestMs: first.latestMs + offsetMs };
    offsetMs += waiter.cost * ctx.paceIntervalMs;
    if (present.has(waiter)) admit(ctx, queue, waiter, decision, slot);
    else handOver(ctx, queue, decision, waiter.cost, slot);
  }
}

/**
 * GCRA: a booking of `cost` fits once the schedule's end (now + `resetAfterMs`) is within the
 * horizon minus `cost` slots; waiting for `refillUnits` slots instead makes one call book many.
 */
function refillWaitMs(ctx: QueueContext, decision: Decision, cost: number): number {
  const units = Math.max(cost, ctx.refillUnits);
  return Math.max(decision.retryAfterMs, decision.resetAfterMs + units * ctx.paceIntervalMs - ctx.horizonMs);
}

function timeOut(ctx: QueueContext, queue: KeyQueue, waiter: Waiter, retryAfterMs: number): void {
  const error = new AcquireTimeoutError(
    `acquire of ${waiter.cost} unit(s) on '${queue.key}' would wait ${Math.ceil(retryAfterMs)} ms, past its maxWaitMs`,
    retryAfterMs,
  );
  withdraw(ctx, queue, waiter, error);
}

/**
 * Paced: the store decided somewhere between asking and the reply, so the unit's slot (its place
 * in GCRA's schedule, `resetAfterMs − cost × T` after the decision) lies between the two readings.
 * Without a lateness bound it is released from the later reading (never early). With one, from
 * the earlier: the bound counts from there, and a slow reply (a loaded machine) would otherwise
 * eat it, and past it give up every slot of the batch. The store decides soon after the call is
 * sent; most of a slow reply is this event loop reading it late.
 */
function slotOf(ctx: QueueContext, decision: Decision, cost: number, askedMs: number, repliedMs: number): Slot {
  if (ctx.paceIntervalMs === 0) return { atMs: repliedMs, latestMs: Number.POSITIVE_INFINITY };
  const aheadMs = Math.max(0, decision.resetAfterMs - cost * ctx.paceIntervalMs);
  const fromMs = Number.isFinite(ctx.maxLatenessMs) ? askedMs : repliedMs;
  return { atMs: fromMs + aheadMs, latestMs: askedMs + aheadMs + ctx.maxLatenessMs };
}

/** Resolves a waiter now, or (paced) at its slot. */
function admit(ctx: QueueContext, queue: KeyQueue, waiter: Waiter, decision: Decision, slot: Slot): void {
  clearTimeout(waiter.timer);
  waiter.timer = undefined;
  if (ctx.paceIntervalMs === 0) {
    finish(waiter, { decision });
    return;
  }
  waiter.booking = { decision, slot };
  queue.booked.add(waiter);
  const delayMs = slot.atMs - ctx.now();
  // Booked past its deadline: this waiter is told at once and the slot is handed on.
  if (slot.atMs > waiter.deadlineMs) {
    timeOut(ctx, queue, waiter, delayMs);
    return;
  }
  if (delayMs <= 0) {
    release(ctx, queue, waiter);
    return;
  }
  waiter.timer = setTimeout(() => release(ctx, queue, waiter), timerDelayMs(delayMs));
}

function release(ctx: QueueContext, queue: KeyQueue, waiter: Waiter): void {
  const booking = waiter.booking;
  if (booking === undefined) return;
  const nowMs = ctx.now();
  if (nowMs > booking.slot.latestMs) {
    // Too late for its slot (this process stalled, or the store's reply was slow): book again.
    unbook(ctx, queue, waiter);
    queue.waiting.unshiftAll([waiter]);
    pump(ctx, queue);
    return;
  }
  // Two timers that fire late together would release a burst: this process keeps its own releases
  // T apart. Never before the slot either (a slot past setTimeout's range is reached in steps).
  const notBeforeMs = Math.max(queue.nextReleaseMs, booking.slot.atMs);
  if (notBeforeMs > nowMs) {
    waiter.timer = setTimeout(() => release(ctx, queue, waiter), timerDelayMs(notBeforeMs - nowMs));
    return;
  }
  // With a lateness bound, slots alone keep releases apart (each lies within maxLatenessMs of its
  // slot); spacing them from this release instead would carry its lateness on to every later slot
  // of the batch, until they pass the bound and are given up.
  const fromMs = Number.isFinite(ctx.maxLatenessMs) ? booking.slot.atMs : nowMs;
  queue.nextReleaseMs = fromMs + waiter.cost * ctx.paceIntervalMs;
  queue.booked.delete(waiter);
  waiter.booking = undefined;
  waiter.timer = undefined;
  finish(waiter, { decision: booking.decision });
  settle(ctx, queue);
}

/**
 * Units admitted for a waiter that left: the first queued waiter they cover (cost, deadline)
 * takes them, keeping its place in line; otherwise they are refunded where the limiter can take
 * a refund and not paced. A paced slot is never refunded: moving GCRA's schedule back would put two
 * later units in one slot, so a slot nobody takes stays spent (the fleet sends one call fewer).
 */
function handOver(ctx: QueueContext, queue: KeyQueue, decision: Decision, units: number, slot: Slot): void {
  let heir = queue.waiting.head;
  while (heir !== undefined && !(heir.cost <= units && heir.deadlineMs >= slot.atMs)) heir = heir.next;
  if (heir !== undefined) {
    queue.waiting.remove(heir);
    admit(ctx, queue, heir, decision, slot);
    return;
  }
  if (ctx.paceIntervalMs > 0 || ctx.limiter.refund === undefined) return;
  // Best effort: a refund that fails leaves the units spent, which only ever under-admits.
  ctx.limiter.refund(queue.key, units).catch(() => {});
}
