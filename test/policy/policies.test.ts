import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/errors.js';
import { failClosed, failOpen, reasonOf } from '../../src/policy/policies.js';

const unavailable = (cause?: unknown) => new StoreUnavailableError('Redis could not decide', cause);

describe('fail open / fail closed decisions', () => {
  it('fail open admits and reports what a fresh key would hold after the request', () => {
    expect(failOpen(10, 3)).toEqual({ allowed: true, limit: 10, remaining: 7, retryAfterMs: 0, resetAfterMs: 0 });
    expect(failOpen(2, 5).remaining).toBe(0);
  });

  it('fail closed denies with the retry time given, at least 1 ms, and Infinity for a never-possible cost', () => {
    expect(failClosed(10, 1, 700)).toEqual({
      allowed: false,
      limit: 10,
      remaining: 0,
      retryAfterMs: 700,
      resetAfterMs: 0,
    });
    expect(failClosed(10, 1, 0).retryAfterMs).toBe(1);
    expect(failClosed(10, 11, 700).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('reasonOf', () => {
  it('Redis error replies are script errors', () => {
    expect(reasonOf(unavailable(new Error('ERR Error running script (call to f_abc): wrong number of args')))).toBe(
      'script-error',
    );
    expect(reasonOf(unavailable(new Error("CROSSSLOT Keys in request don't hash to the same slot")))).toBe(
      'script-error',
    );
    expect(reasonOf(unavailable(new Error('WRONGTYPE Operation against a key holding the wrong kind of value')))).toBe(
      'script-error',
    );
  });

  it('an unreadable reply (no cause) is a script error', () => {
    expect(reasonOf(unavailable())).toBe('script-error');
  });

  it('connection failures and a server that cannot serve yet are the connection', () => {
    expect(reasonOf(unavailable(new Error('connect ECONNREFUSED 127.0.0.1:6390')))).toBe('connection');
    expect(reasonOf(unavailable(new Error('Connection is closed.')))).toBe('connection');
    expect(reasonOf(unavailable(new Error("Stream isn't writeable and enableOfflineQueue options is false")))).toBe(
      'connection',
    );
    expect(reasonOf(unavailable(new Error('LOADING Redis is loading the dataset in memory')))).toBe('connection');
    expect(reasonOf(unavailable(new Error('BUSY Redis is busy running a script')))).toBe('connection');
    expect(reasonOf(unavailable('a string thrown by a client'))).toBe('connection');
  });

  it('looks through StoreUnavailableErrors wrapped by a layer in between (a leased limiter)', () => {
    expect(reasonOf(unavailable(unavailable(new Error('ERR bad'))))).toBe('script-error');
    expect(reasonOf(unavailable(unavailable(new Error('Connection is closed.'))))).toBe('connection');
  });
});
