import type { InvalidationChange, Limiter } from '../limiter.js';
import { checkKey } from '../validate.js';
import { forget } from './invalidation.js';
import type { KeyTable } from './key-table.js';
import type { Returns } from './returns.js';
import type { LeaseCounters } from './stats.js';

type AdminMembers = Pick<Limiter, 'block' | 'unblock' | 'penalty' | 'reward' | 'invalidate'>;

/**
 * A leased limiter's admin operations, each present when the remote has it. Those that change
 * what the key may spend forget this instance's hold on the key first (so its next request asks
 * the remote; a reward gives the held units back, see `forget`), then act on the remote, which
 * tells the other instances. `penalty` only charges the remote: units held here were charged
 * before it, and the penalty delays what comes after, so the key's total only shrinks.
 */
export function adminOperations(
  remote: Limiter,
  table: KeyTable,
  counters: LeaseCounters,
  returns: Returns,
): AdminMembers {
  const forgetting =
    <A extends unknown[]>(change: InvalidationChange, call: ((key: string, ...args: A) => Promise<void>) | undefined) =>
    async (key: string, ...args: A): Promise<void> => {
      checkKey(key);
      const state = table.get(key);
      if (state) forget(key, state, counters, returns, change);
      await (call as (key: string, ...args: A) => Promise<void>).call(remote, key, ...args);
    };
  const { block, unblock, penalty, reward, invalidate } = remote;
  return {
    ...(block && { block: forgetting('block', block) }),
    ...(unblock && { unblock: forgetting('unblock', unblock) }),
    ...(reward && { reward: forgetting('reward', reward) }),
    ...(invalidate && { invalidate: forgetting('invalidate', invalidate) }),
    ...(penalty && { penalty: (key: string, units: number) => penalty.call(remote, key, units) }),
  };
}
