import { createLocalInvalidations } from '../../admin.js';
import { ConfigError } from '../../errors.js';
import type { InvalidationChange, Invalidations } from '../../limiter.js';
import {
  type ChannelSubscriber,
  fromNodeRedisSubscriber,
  isNodeRedisSubscriber,
} from './clients/node-redis-subscriber.js';

/** A Redis limiter's invalidations: its own, heard at once, and other instances', through pub/sub. */
export interface RedisInvalidations extends Invalidations {
  /** The message telling every instance that `key` changed; this instance hears it at once. */
  messageFor(key: string, change: InvalidationChange): string;
  /** Tells this instance's listeners now (its own change: its echo from Redis is skipped). */
  emit(key: string, change: InvalidationChange): void;
  /** Stops listening; the subscriber connection stays open (the application owns it). */
  close(): void;
}

/**
 * Listens on `channel` through `subscriber`, a connection of its own (subscribe mode takes a
 * connection over). A message is `origin + '\n' + change + '\n' + key`, `origin` naming the
 * limiter that sent it, so a limiter skips its own echo and tells its listeners at once instead.
 *
 * Notifications are lost while the connection is down: it is not `live` from the moment it
 * closes, and every listener hears `undefined` (forget every key) then, and again once it has
 * subscribed anew, so nothing missed in between outlives the reconnection.
 */
export function followChannel(subscriber: unknown, channel: string): RedisInvalidations {
  const client = requireSubscriber(subscriber);
  const origin = crypto.randomUUID();
  const local = createLocalInvalidations();
  let live = false;
  let closed = false;
  const onMessage = (...args: unknown[]) => {
    const [from, message] = args;
    if (from !== channel || typeof message !== 'string') return;
    const at = message.indexOf('\n');
    const changeAt = message.indexOf('\n', at + 1);
    if (changeAt === -1 || message.slice(0, at) === origin) return;
    const change = message.slice(at + 1, changeAt);
    if (CHANGES.has(change)) local.emit(message.slice(changeAt + 1), change as InvalidationChange);
  };
  const subscribe = () => {
    client.subscribe(channel).then(
      () => {
        if (closed) return;
        live = true;
        local.emit(undefined);
      },
      () => {}, // the connection's next 'ready' subscribes again
    );
  };
  const onDown = () => {
    if (!live) return;
    live = false;
    local.emit(undefined);
  };
  client.on('message', onMessage);
  client.on('ready', subscribe);
  client.on('close', onDown);
  if (client.status === 'ready' || client.status === undefined) subscribe();
  const followed: Omit<RedisInvalidations, 'live'> = {
    subscribe: local.subscribe,
    messageFor: (key, change) => `${origin}\n${change}\n${key}`,
    emit: (key, change) => local.emit(key, change),
    close() {
      closed = true;
      live = false;
      client.off('message', onMessage);
      client.off('ready', subscribe);
      client.off('close', onDown);
    },
  };
  // Defined after the literal: a getter inside it would put the object in V8's dictionary mode,
  // and a leased limiter reads `live` on every refusal.
  return Object.defineProperty(followed, 'live', {
    get: () => live,
    enumerable: true,
    configurable: true,
  }) as RedisInvalidations;
}

const CHANGES = new Set<string>(['reset', 'block', 'unblock', 'reward', 'invalidate'] satisfies InvalidationChange[]);

/** An ioredis/iovalkey connection as it is; a node-redis one adapted to that shape. */
function requireSubscriber(subscriber: unknown): ChannelSubscriber {
  const candidate = subscriber as Partial<ChannelSubscriber> | null;
  if (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.subscribe === 'function' &&
    typeof candidate.on === 'function' &&
    typeof candidate.off === 'function'
  ) {
    return isNodeRedisSubscriber(candidate) ? fromNodeRedisSubscriber(candidate) : (candidate as ChannelSubscriber);
  }
  throw new ConfigError(
    'subscriber must be a client of its own: an ioredis or iovalkey Redis or Cluster, or a connected node-redis client',
  );
}
