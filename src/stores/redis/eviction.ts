import type { Warner } from '../../warnings.js';

/** A client with ioredis's, iovalkey's or node-redis's `info(section)`. */
interface InfoClient {
  info(section: string): Promise<unknown>;
}

// One read per client, however many limiters share it.
const policies = new WeakMap<object, Promise<unknown>>();

/**
 * Reads the server's `maxmemory-policy` once per client, in the background, and warns through
 * `warn` when it can evict Sluice's keys: any `allkeys-*` policy, and any `volatile-*` policy
 * because every Sluice key has a TTL (so Sluice's keys are the ones eligible). An evicted key
 * is a fresh key: its limit starts over. `INFO memory`, not `CONFIG GET`: managed services often
 * disable CONFIG. A plain command, not a script, so it is never counted as a decision's round
 * trip. A client without `info` (a bare ScriptClient) is not checked; a failed read is ignored.
 */
export function warnIfEvicting(client: unknown, warn: Warner): void {
  if (!hasInfo(client)) return;
  let policy = policies.get(client);
  if (policy === undefined) {
    policy = client.info('memory').then((text) => /^maxmemory_policy:([\w-]+)/m.exec(String(text))?.[1]);
    policies.set(client, policy);
  }
  policy.then(
    (name) => {
      if (typeof name === 'string' && evicts(name)) warn('SLUICE_REDIS_EVICTION', evictionMessage(name));
    },
    () => {},
  );
}

function hasInfo(client: unknown): client is InfoClient {
  return typeof client === 'object' && client !== null && typeof (client as Partial<InfoClient>).info === 'function';
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
