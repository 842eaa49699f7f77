import type { Warner } from '../../warnings.js';
import { defineScript, runScript, type ScriptClient } from './script.js';

// INFO, not CONFIG GET: managed services (ElastiCache, Memorystore, Upstash…) often disable CONFIG.
const readPolicy = defineScript("return string.match(redis.call('INFO', 'memory'), 'maxmemory_policy:([%w%-]+)')");

// One read per client, however many limiters share it.
const policies = new WeakMap<object, Promise<unknown>>();

/**
 * Reads the server's `maxmemory-policy` once per client, in the background, and warns through
 * `warn` when it can evict Sluice's keys: any `allkeys-*` policy, and any `volatile-*` policy
 * because every Sluice key has a TTL (so Sluice's keys are the ones eligible). An evicted key
 * is a fresh key: its limit starts over. A failed read is ignored; decisions never wait for it.
 */
export function warnIfEvicting(client: ScriptClient, identity: object, warn: Warner): void {
  let policy = policies.get(identity);
  if (policy === undefined) {
    policy = runScript(client, readPolicy, [], []);
    policies.set(identity, policy);
  }
  policy.then(
    (name) => {
      if (typeof name === 'string' && evicts(name)) warn('SLUICE_REDIS_EVICTION', evictionMessage(name));
    },
    () => {},
  );
}

/** Whether a `maxmemory-policy` may evict keys that have a TTL (all of Sluice's do). */
export function evicts(policy: string): boolean {
  return policy.startsWith('allkeys-') || policy.startsWith('volatile-');
}

function evictionMessage(policy: string): string {
  const which = policy.startsWith('volatile-')
    ? 'every Sluice key has a TTL, so Sluice keys are the ones it evicts'
    : 'it evicts any key, Sluice keys included';
  return (
    `Redis maxmemory-policy is '${policy}': under memory pressure ${which}, and an evicted key's ` +
    'limit starts over. Use a dedicated instance or database with maxmemory-policy noeviction, ' +
    'sized from MEMORY USAGE per key (docs/deployment.md, "Memory and eviction").'
  );
}
