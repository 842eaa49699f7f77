import type { Redis } from 'ioredis';
import { afterAll } from 'vitest';

/**
 * One subscriber connection per client connection, made on first use and shared by the limiters
 * created on it (subscribe mode takes a connection over), closed after the file's tests.
 */
export function subscribersOf(redis: (connection: number) => Redis): (connection: number) => Redis {
  const subscribers = new Map<number, Redis>();
  afterAll(() => {
    for (const subscriber of subscribers.values()) subscriber.disconnect();
  });
  return (connection) => {
    let subscriber = subscribers.get(connection);
    if (!subscriber) {
      subscriber = redis(connection).duplicate();
      subscriber.on('error', () => {});
      subscribers.set(connection, subscriber);
    }
    return subscriber;
  };
}
