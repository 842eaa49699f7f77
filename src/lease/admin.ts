import type { InvalidationChange, Limiter } from '../limiter.js';
import { checkKey } from '../validate.js';
import { forget } from './invalidation.js';
import type { KeyTable } from './key-table.js';
import type { LeaseCounters } from './stats.js';

type AdminMembers = Pick<Limiter, 'block' | 'unblock' | 'penalty' | 'reward' | 'invalidate'>;

/**
 * A leased limiter's admin operations, each present when the remote has it. Those that change
 * what the key may spend forget this instance's hold on the key first (so its next request asks
 * the remote), then act on the remote, which tells the other instances. `penalty` only charges
 * the remote: units held here were charged before it, and the penalty delays what comes after.
 */
export function adminOperations(
  remote: Limiter,
  tables: () => Iterable<KeyTable>,
  counters: LeaseCounters,
): AdminMembers {
  const forgetting =
    <A extends unknown[]>(change: InvalidationChange, call: ((key: string, ...args: A) => Promise<void>) | undefined) =>
    async (key: string, ...args: A): Promise<void> => {
      checkKey(key);
      for (const table of tables()) {
        const state = table.get(key);
        if (state) forget(state, counters, change);
      }
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
