import type { Algorithm } from '../../algorithms/types.js';
import { type Commit, costArg } from './scripts/compose.js';

/**
 * The KEYS and ARGV of an unbatched decision, kept from the call before when they repeat: a hot
 * key (one client behind the HTTP layer) asks for the same key at the same cost call after call,
 * and on the server's clock nothing else in them changes. Neither array is changed after it is
 * made (the clients copy them into the command), so a call can reuse the last one's.
 */
export function lastCallArgs(
  /** The limiter's checked Redis name of a key (throws InvalidKeyError). */
  redisKeyOf: (key: string) => string,
  algorithm: Algorithm,
  onServerClock: boolean,
) {
  let lastKey: string | undefined;
  let keys: readonly string[] = [];
  let lastCost = Number.NaN;
  let args: readonly (string | number)[] = [];
  return {
    /** `[redis name of key]`, after checking `key` (throws InvalidKeyError). */
    keysOf(key: string): readonly string[] {
      // `lastKey` starts undefined: a first call with an undefined key must still be checked.
      if (key !== lastKey || lastKey === undefined) {
        keys = [redisKeyOf(key)];
        lastKey = key;
      }
      return keys;
    },
    /** The ARGV of a decision under `core` at the time `now` ('' on the server's clock). */
    argsOf(core: Algorithm, now: string, cost: number, commit: Commit): readonly (string | number)[] {
      const costValue = costArg(cost, commit);
      if (!onServerClock || core !== algorithm) return [now, ...core.scriptParams, costValue];
      if (costValue !== lastCost) {
        args = [now, ...core.scriptParams, costValue];
        lastCost = costValue;
      }
      return args;
    },
  };
}
