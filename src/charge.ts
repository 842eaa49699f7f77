import type { AlgorithmParams } from './algorithms/types.js';
import type { FailureMode, ParamsOptions } from './decision.js';
import { ReservationError } from './errors.js';
import type { Limiter } from './limiter.js';

/**
 * One admitted charge: `cost` units of `key` on `limiter` under `params`, and how many of them
 * still stand. Every give-back and every extra charge of it goes through here, so each is made
 * under the charge's own numbers (never the limiter's defaults), never gives back more than
 * stands, and never gives a unit back twice, whichever features ask (a nested limit's denial, an
 * in-flight cap's refusal, outcome counting, a reservation's settle).
 *
 * What stands: `cost` when the store charged it, 0 when a failure policy admitted it without the
 * store (`stored` false: nothing is ever given back or charged for it); minus what was given
 * back, plus debt. Once a give-back leaves nothing standing, the charge is over: later give-backs,
 * debt and settles change nothing (they resolve, as a repeated call of an idempotent operation).
 * A give-back counts from the moment it is sent; one that fails is not retried and its units
 * stay spent in the store (erring towards charging). Debt counts once the store took it.
 */
export class ChargeRecord {
  readonly limiter: Limiter;
  readonly key: string;
  /** Units charged at admission (a reservation's estimate). */
  readonly cost: number;
  /** The numbers the units were charged under; `undefined`: the limiter's own. */
  readonly params: AlgorithmParams | undefined;
  /** The failure mode the charge was made with; `undefined`: the limiter's own. */
  readonly failure: FailureMode | undefined;
  #standing: number;
  #over: boolean;
  #settled: { actual: number; done: Promise<void> } | undefined;

  constructor(
    limiter: Limiter,
    key: string,
    cost: number,
    params: AlgorithmParams | undefined,
    failure: FailureMode | undefined,
    stored: boolean,
  ) {
    this.limiter = limiter;
    this.key = key;
    this.cost = cost;
    this.params = params;
    this.failure = failure;
    this.#standing = stored ? cost : 0;
    this.#over = !stored;
  }

  /** Units of this charge the store holds now: `cost` − given back + debt. */
  get standing(): number {
    return this.#standing;
  }

  /** True once a give-back left nothing standing (or the store never held the charge). */
  get over(): boolean {
    return this.#over;
  }

  /**
   * Gives back `units` (default: all that stands, at most what stands) through the limiter's
   * `refund`, under the charge's params. Resolves with the units given back: 0 when nothing
   * stands (a second give-back) or the limiter takes no refunds (the units stay spent).
   * Rejects with the limiter's error; the units are not given back again.
   */
  async giveBack(units: number = this.#standing): Promise<number> {
    const refund = this.limiter.refund;
    if (refund === undefined) return 0;
    const back = Math.min(units, this.#standing);
    this.#standing -= back;
    if (this.#standing === 0) this.#over = true;
    if (back > 0) await refund.call(this.limiter, this.key, back, this.#paramsOptions());
    return back;
  }

  /**
   * Spends `units` more of the key as debt (the limiter's `charge`, no admission check) under
   * the charge's params. Changes nothing once the charge is over.
   * @throws {ReservationError} (rejects) when the limiter cannot charge debt.
   */
  async chargeDebt(units: number): Promise<void> {
    if (this.#over || units === 0) return;
    const charge = this.limiter.charge;
    if (charge === undefined) {
      throw new ReservationError(`'${this.limiter.algorithm.name}' limiter cannot charge debt; the estimate stands`);
    }
    await charge.call(this.limiter, this.key, units, this.#paramsOptions());
    this.#standing += units;
  }

  /**
   * Resets the key (the limiter's `reset`): every unit of it, this charge's among them, is gone,
   * so nothing of this charge stands and it is over.
   */
  async resetKey(): Promise<void> {
    this.#standing = 0;
    this.#over = true;
    await this.limiter.reset(this.key);
  }

  /**
   * Settles the charge as a reservation at `actual` units: below `cost`, gives back the
   * difference (at most what stands); above it, charges the excess as debt. Once only: the
   * same `actual` again resolves like the first call.
   * @throws {ReservationError} (rejects) when settled before at another `actual`, or above
   * `cost` on a limiter without `charge`.
   */
  settle(actual: number): Promise<void> {
    if (this.#settled !== undefined) {
      if (this.#settled.actual === actual) return this.#settled.done;
      return Promise.reject(
        new ReservationError(`the reservation of '${this.key}' was already settled at ${this.#settled.actual}`),
      );
    }
    const done =
      actual < this.cost
        ? this.giveBack(this.cost - actual).then(() => undefined)
        : this.chargeDebt(actual - this.cost);
    this.#settled = { actual, done };
    return done;
  }

  /** Whether {@link settle} was called. */
  get settled(): boolean {
    return this.#settled !== undefined;
  }

  #paramsOptions(): ParamsOptions | undefined {
    return this.params === undefined ? undefined : { params: this.params };
  }
}
