import type { Redis } from 'ioredis';
import { expect, it } from 'vitest';

/*
 * A decision script decides a call of one key with one committed cost before its general path,
 * and falls through to it for what that path alone handles. The one-key tests decide the same
 * state twice: alone (the one-key path, or its fall-through) and as the first key of a two-key
 * call (always the general path), and expect the same reply and the same state after.
 * Equivalence, not speed: that is measured (callgrind, the bench), never asserted in a test.
 */

/** Plants a key's state before the call. */
export type Setup = (key: string) => Promise<unknown>;

/** What one decision left: its reply, and the key's type, value and whether it has a TTL. */
export interface Outcome {
  readonly reply: unknown[];
  readonly type: string;
  readonly value: unknown;
  readonly owned: boolean;
}

let keys = 0;

/**
 * Decides `cost` (a cost argument: `costArg`'s) for a new key planted by `setup`, by `source`
 * with `args` (the clock, then the parameters): alone, or first in a call with another key.
 */
export async function decideAfter(
  redis: Redis,
  source: string,
  args: readonly number[],
  setup: Setup,
  cost: number,
  alone: boolean,
): Promise<Outcome> {
  const key = `one{${++keys}}`;
  await setup(key);
  const keysOfCall = alone ? [key] : [key, `${key}:other`];
  const costs = alone ? [cost] : [cost, 0];
  const reply = (await redis.eval(source, keysOfCall.length, ...keysOfCall, ...args, ...costs)) as unknown[];
  const type = await redis.type(key);
  const value = type === 'string' ? await redis.get(key) : type === 'hash' ? await redis.hgetall(key) : null;
  return { reply: reply.slice(0, 4), type, value, owned: (await redis.pttl(key)) > 0 };
}

/** Decides `cost` for a key planted by `setup`, alone or first in a call of two (see `decideAfter`). */
export type Decide = (setup: Setup, cost: number, alone: boolean) => Promise<Outcome>;

/** A case: its name, the state it plants, and the cost decided (an integer ≥ 0: committed). */
export type Case = readonly [name: string, setup: Setup, cost: number];

/**
 * One test per case, each expecting the call of one key to decide as the general path does, and
 * one for a peek and a partial request of one key (on a state `peekSetup` plants), which stay on
 * the general path.
 */
export function itDecidesAsTheGeneralPath(decide: Decide, cases: readonly Case[], peekSetup: Setup): void {
  for (const [name, setup, cost] of cases) {
    it(name, async () => {
      expect(await decide(setup, cost, true)).toEqual(await decide(setup, cost, false));
    });
  }
  it('a peek and a partial request of one key stay on the general path', async () => {
    for (const cost of [-1 - 2, -0.5 - 4]) {
      expect(await decide(peekSetup, cost, true)).toEqual(await decide(peekSetup, cost, false));
    }
  });
}

/**
 * The cases of every algorithm whose state is a hash: a key of another type, with a TTL (its read
 * fails the decision) and without (dropped as unowned), and a block key, live or already ended by
 * the call's clock (`nowMs`).
 */
export function hashStateCases(redis: () => Redis, nowMs: number): Case[] {
  return [
    ['a key of another type with a TTL', (key) => redis().set(key, 'x', 'PX', 60_000), 1],
    ['a key of another type without a TTL', (key) => redis().set(key, 'x'), 1],
    ['a live block', (key) => redis().set(`${key}:block`, nowMs + 30_000, 'PX', 30_000), 1],
    ['a block key already ended by the call’s clock', (key) => redis().set(`${key}:block`, nowMs - 1, 'PX', 30_000), 1],
  ];
}
