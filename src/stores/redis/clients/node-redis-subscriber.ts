/** What Sluice uses of a node-redis (v5) client of its own in subscribe mode. */
export interface NodeRedisSubscriberLike {
  subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  off(event: string, listener: (...args: unknown[]) => void): unknown;
  readonly isReady: boolean;
}

/** The ioredis-shaped pub/sub connection `followChannel` listens on. */
export interface ChannelSubscriber {
  subscribe(channel: string): Promise<unknown>;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  off(event: string, listener: (...args: unknown[]) => void): unknown;
  readonly status?: string;
}

/** Whether `client` looks like a node-redis client: a `subscribe` that takes a listener, and `isReady`. */
export function isNodeRedisSubscriber(client: object): client is NodeRedisSubscriberLike {
  const candidate = client as Partial<NodeRedisSubscriberLike>;
  return typeof candidate.subscribe === 'function' && typeof candidate.isReady === 'boolean';
}

/**
 * A node-redis connection in ioredis's shape. node-redis hands each message to the listener given
 * to `subscribe`, not to a `message` event, and subscribes again by itself before it is `ready`
 * after a reconnection: so it subscribes once (a second `subscribe` would deliver every message
 * twice), and a drop is its `reconnecting` or `end`, as `close` is ioredis's.
 */
export function fromNodeRedisSubscriber(client: NodeRedisSubscriberLike): ChannelSubscriber {
  const messageListeners = new Set<(...args: unknown[]) => void>();
  const subscribed = new Map<string, Promise<unknown>>();
  const eventsOf = (event: string) => (event === 'close' ? ['reconnecting', 'end'] : [event]);
  return {
    subscribe(channel) {
      let done = subscribed.get(channel);
      if (done === undefined) {
        done = client.subscribe(channel, (message, from) => {
          for (const listener of messageListeners) listener(from, message);
        });
        subscribed.set(channel, done);
        done.catch(() => subscribed.delete(channel));
      }
      return done;
    },
    on(event, listener) {
      if (event === 'message') messageListeners.add(listener);
      else for (const name of eventsOf(event)) client.on(name, listener);
    },
    off(event, listener) {
      if (event === 'message') messageListeners.delete(listener);
      else for (const name of eventsOf(event)) client.off(name, listener);
    },
    get status() {
      return client.isReady ? 'ready' : 'connecting';
    },
  };
}
