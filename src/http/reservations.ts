import { ConfigError, ReservationError } from '../errors.js';
import { costOf } from '../validate.js';
import type { NamedRule } from './config.js';
import type { ChargeResult } from './nested.js';

/** One request's charge at an estimate, open until the handler settles it. */
interface Open {
  result: ChargeResult;
  settled?: { actual: number; done: Promise<void> };
}

// Keyed by the framework's request object, so an open reservation lives as long as its request.
const openByRequest = new WeakMap<object, Map<string, Open>>();

/**
 * The `reservations` option, checked at construction: names of `limits` whose cost is an
 * estimate the handler settles.
 * @throws {ConfigError} when a name is not one of `limits`, or its limiter has no `refund`.
 */
export function reservationNames<Req>(names: readonly string[], rules: readonly NamedRule<Req>[]): ReadonlySet<string> {
  if (!Array.isArray(names)) throw new ConfigError('reservations must be an array of limit names');
  for (const name of names) {
    const rule = rules.find((candidate) => candidate.name === name);
    if (rule === undefined) throw new ConfigError(`reservations: "${String(name)}" is not the name of a limit`);
    if (typeof rule.limiter.refund !== 'function') {
      throw new ConfigError(`reservations: limit "${name}" needs a limiter that takes refunds (GCRA, token bucket)`);
    }
  }
  return new Set(names);
}

/** Opens the admitted request's reservations (its charges named in `names`) for {@link settleReservation}. */
export function openReservations(request: unknown, results: readonly ChargeResult[], names: ReadonlySet<string>): void {
  if (typeof request !== 'object' || request === null) return;
  const open = new Map<string, Open>();
  for (const result of results) if (names.has(result.name)) open.set(result.name, { result });
  if (open.size > 0) openByRequest.set(request, open);
}

/**
 * Settles a request's reservation at the real cost: the limit named `name`, listed in the
 * middleware's `reservations`, was charged its cost as an estimate when the request was
 * admitted. Below the estimate, the difference is refunded; above it, the excess is charged as
 * debt (the limiter's `charge`) that delays the key's next admissions, never this request.
 * Call it from the handler with the framework's own request object (node:http and Express `req`,
 * Fastify `request`, Hono `c`, Koa `ctx`). Never settled, the estimate stands.
 *
 * Idempotent: the same `actual` again resolves like the first call; a different one rejects.
 * A request admitted by a failure policy (nothing stored) settles without a store call.
 *
 * @throws {InvalidCostError} when `actual` is not a non-negative safe integer.
 * @throws {ReservationError} when the request has no open reservation `name` (not admitted, or
 * not listed in `reservations`), it was settled at another value, or it is above the estimate on
 * a limiter without `charge`.
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
  if (open.settled !== undefined) {
    if (open.settled.actual === actual) return open.settled.done;
    throw new ReservationError(`reservation "${name}" was already settled at ${open.settled.actual}`);
  }
  open.settled = { actual, done: apply(open.result, actual) };
  return open.settled.done;
}

async function apply(result: ChargeResult, actual: number): Promise<void> {
  const { limiter, key, cost: estimate } = result;
  if (result.decision.degraded || actual === estimate) return;
  if (actual < estimate) {
    await limiter.refund?.(key, estimate - actual);
    return;
  }
  if (limiter.charge === undefined) {
    throw new ReservationError(`limit "${result.name}" cannot charge debt; the estimate stands`);
  }
  await limiter.charge(key, actual - estimate);
}
