import type { ChargeRecord } from '../charge.js';
import { ConfigError, ReservationError } from '../errors.js';
import { monotonicClock } from '../limiter.js';
import { costOf, orDefault, requireDurationMs } from '../validate.js';
import type { NamedRule } from './config.js';
import { type ChargeResult, recordOf } from './nested.js';

/** One request's charge at an estimate, open until the handler settles it. */
interface Open {
  record: ChargeRecord;
  expiresAtMs: number;
}

/**
 * One entry of the `reservations` option: a name of `limits`, alone (`ttlMs` 60,000, as
 * `reserve`) or with the milliseconds within which the handler may settle it.
 */
export type ReservationRule = string | { name: string; ttlMs?: number };

const DEFAULT_TTL_MS = 60_000;

// Keyed by the framework's request object, so an open reservation lives as long as its request.
const openByRequest = new WeakMap<object, Map<string, Open>>();

/**
 * The `reservations` option, checked at construction: the `ttlMs` of each limit of `limits`
 * whose cost is an estimate the handler settles, by name.
 * @throws {ConfigError} when an entry is not a name of `limits` (alone or with a valid `ttlMs`),
 * or its limiter has no `refund`.
 */
export function reservationTtls<Req>(
  entries: readonly ReservationRule[],
  rules: readonly NamedRule<Req>[],
): ReadonlyMap<string, number> {
  if (!Array.isArray(entries)) throw new ConfigError('reservations must be an array of limit names');
  const ttls = new Map<string, number>();
  for (const entry of entries) {
    const { name, ttlMs } = typeof entry === 'object' && entry !== null ? entry : { name: entry, ttlMs: undefined };
    const rule = rules.find((candidate) => candidate.name === name);
    if (rule === undefined) throw new ConfigError(`reservations: "${String(name)}" is not the name of a limit`);
    if (typeof rule.limiter.refund !== 'function') {
      throw new ConfigError(`reservations: limit "${name}" needs a limiter that takes refunds (GCRA, token bucket)`);
    }
    ttls.set(name, requireDurationMs(`reservations["${name}"].ttlMs`, orDefault(ttlMs, DEFAULT_TTL_MS)));
  }
  return ttls;
}

/** Opens the admitted request's reservations (its charges named in `ttls`) for {@link settleReservation}. */
export function openReservations(
  request: unknown,
  results: readonly ChargeResult[],
  ttls: ReadonlyMap<string, number>,
): void {
  if (typeof request !== 'object' || request === null) return;
  const open = new Map<string, Open>();
  const nowMs = monotonicClock();
  for (const result of results) {
    const ttlMs = ttls.get(result.name);
    const record = ttlMs === undefined ? undefined : recordOf(result);
    if (record !== undefined) open.set(result.name, { record, expiresAtMs: nowMs + (ttlMs as number) });
  }
  if (open.size > 0) openByRequest.set(request, open);
}

/**
 * Settles a request's reservation at the real cost: the limit named `name`, listed in the
 * middleware's `reservations`, was charged its cost as an estimate when the request was
 * admitted. Below the estimate, the difference is refunded; above it, the excess is charged as
 * debt (the limiter's `charge`) that delays the key's next admissions, never this request.
 * Call it from the handler with the framework's own request object (node:http and Express `req`,
 * Fastify `request`, Hono `c`, Koa `ctx`). Never settled, or not within the reservation's
 * `ttlMs` (a handler that hangs), the estimate stands, as with `reserve`.
 *
 * The refund and the debt are made under the numbers the request was charged under (its
 * limit's `params`), never the limiter's own. They draw on what of the charge still stands:
 * after the limit's `countWhen` gave the charge back (a response that does not count), a
 * settle changes nothing; after a settle, `countWhen` gives back the settled units.
 *
 * Idempotent: the same `actual` again resolves like the first call; a different one rejects.
 * A request admitted by a failure policy (nothing stored) settles without a store call.
 *
 * @throws {InvalidCostError} when `actual` is not a non-negative safe integer.
 * @throws {ReservationError} when the request has no open reservation `name` (not admitted, or
 * not listed in `reservations`), it was settled at another value, its `ttlMs` has passed, or it
 * is above the estimate on a limiter without `charge`.
 * @throws {StoreUnavailableError} when the store could not refund or charge (the estimate stands).
 * @example
 * ```ts
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { settleReservation } from 'sluice/http';
 * import { rateLimit } from 'sluice/express';
 * import express from 'express';
 *
 * const tokens = createMemoryLimiter({ algorithm: gcra({ limit: 100_000, periodMs: 60_000 }) });
 * const app = express();
 * app.use(rateLimit({ limits: { name: 'tokens', limiter: tokens, cost: 1000 }, reservations: ['tokens'] }));
 * app.post('/complete', async (req, res) => {
 *   const used = 640; // the model's reported token count
 *   await settleReservation(req, 'tokens', used); // refunds 360
 *   res.json({ used });
 * });
 * ```
 */
export async function settleReservation(request: object, name: string, actual: number): Promise<void> {
  costOf({ cost: actual });
  const open = openByRequest.get(request)?.get(name);
  if (open === undefined) throw new ReservationError(`this request has no open reservation "${String(name)}"`);
  if (!open.record.settled && monotonicClock() >= open.expiresAtMs) {
    throw new ReservationError(`reservation "${name}" expired: it stands at its estimate of ${open.record.cost}`);
  }
  return open.record.settle(actual);
}
