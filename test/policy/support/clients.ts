import { once } from 'node:events';
import { Redis } from 'ioredis';
import { toScriptClient } from '../../../src/stores/redis/client.js';
import type { ScriptClient } from '../../../src/stores/redis/script.js';

/** The ioredis settings docs/failure-modes.md recommends in front of a failure policy. */
export const resilientOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  connectTimeout: 1000,
  retryStrategy: (attempt: number) => Math.min(attempt * 50, 500),
} as const;

const open: Redis[] = [];

/** A client with the recommended settings; waits until it is ready unless `ready` is false. */
export async function resilientClient(port: number, ready = true): Promise<Redis> {
  const client = new Redis({ host: '127.0.0.1', port, ...resilientOptions });
  client.on('error', () => {}); // reconnection errors are expected here; the limiter reports them
  open.push(client);
  if (ready) await once(client, 'ready');
  return client;
}

export function disconnectAll(): void {
  for (const client of open.splice(0)) client.disconnect();
}

/** A ScriptClient that counts the script calls it sends (EVALSHA and EVAL: each one round trip). */
export function countingClient(client: unknown): ScriptClient & { readonly sent: number } {
  const inner = toScriptClient(client);
  let sent = 0;
  return {
    get sent() {
      return sent;
    },
    evalsha(sha, keys, args) {
      sent++;
      return inner.evalsha(sha, keys, args);
    },
    eval(source, keys, args) {
      sent++;
      return inner.eval(source, keys, args);
    },
  };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
