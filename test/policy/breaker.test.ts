import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { createBreaker } from '../../src/policy/breaker.js';
import { manualClock } from '../../src/testing/index.js';
import { hasFastProperties } from '../support/v8-shapes.js';

describe('circuit breaker', () => {
  it("keeps fast properties, so each decision's acquire and succeeded are no dictionary lookups", () => {
    const clock = manualClock();
    const breaker = createBreaker({ failureThreshold: 1, coolDownMs: 1000 }, clock.now);
    expect(hasFastProperties(breaker)).toBe(true);
    // Still live, enumerable properties.
    expect(Object.keys(breaker)).toEqual(expect.arrayContaining(['state', 'opens']));
    breaker.failed('call');
    expect(breaker).toMatchObject({ state: 'open', opens: 1 });
  });

  it('opens after K consecutive failures, not before; a success resets the count', () => {
    const clock = manualClock();
    const breaker = createBreaker({ failureThreshold: 3, coolDownMs: 1000 }, clock.now);
    breaker.failed('call');
    breaker.failed('call');
    breaker.succeeded('call');
    breaker.failed('call');
    breaker.failed('call');
    expect(breaker.state).toBe('closed');
    expect(breaker.acquire()).toBe('call');
    breaker.failed('call');
    expect(breaker.state).toBe('open');
    expect(breaker.opens).toBe(1);
    expect(breaker.acquire()).toBeUndefined();
  });

  it('lets exactly one probe through after the cool-down; its success closes the breaker', () => {
    const clock = manualClock();
    const breaker = createBreaker({ failureThreshold: 1, coolDownMs: 1000 }, clock.now);
    breaker.failed('call');
    clock.advance(999);
    expect(breaker.acquire()).toBeUndefined();
    expect(breaker.retryInMs()).toBe(1);
    clock.advance(1);
    expect(breaker.acquire()).toBe('probe');
    expect(breaker.state).toBe('half-open');
    expect(breaker.acquire()).toBeUndefined();
    expect(breaker.acquire()).toBeUndefined();
    breaker.succeeded('probe');
    expect(breaker.state).toBe('closed');
    expect(breaker.acquire()).toBe('call');
    expect(breaker.opens).toBe(1);
  });

  it('a failed probe opens it again for a full cool-down, counted as another open', () => {
    const clock = manualClock();
    const breaker = createBreaker({ failureThreshold: 2, coolDownMs: 500 }, clock.now);
    breaker.failed('call');
    breaker.failed('call');
    clock.advance(500);
    expect(breaker.acquire()).toBe('probe');
    clock.advance(40);
    breaker.failed('probe');
    expect(breaker.state).toBe('open');
    expect(breaker.opens).toBe(2);
    expect(breaker.retryInMs()).toBe(500);
    clock.advance(200);
    expect(breaker.retryInMs()).toBe(300);
    expect(breaker.acquire()).toBeUndefined();
  });

  it('ignores stragglers: calls admitted before it opened neither extend nor close it', () => {
    const clock = manualClock();
    const breaker = createBreaker({ failureThreshold: 2, coolDownMs: 1000 }, clock.now);
    breaker.failed('call');
    breaker.failed('call');
    clock.advance(600);
    breaker.failed('call'); // a third in-flight call failing late
    expect(breaker.opens).toBe(1);
    expect(breaker.retryInMs()).toBe(400);
    clock.advance(400);
    expect(breaker.acquire()).toBe('probe');
    breaker.succeeded('call'); // an old call's late success is no probe
    expect(breaker.state).toBe('half-open');
    expect(breaker.acquire()).toBeUndefined();
  });

  it('a released probe (no verdict on the store) lets the next caller probe', () => {
    const clock = manualClock();
    const breaker = createBreaker({ failureThreshold: 1, coolDownMs: 10 }, clock.now);
    breaker.failed('call');
    clock.advance(10);
    expect(breaker.acquire()).toBe('probe');
    breaker.released('probe');
    expect(breaker.acquire()).toBe('probe');
  });

  it('retryInMs is the full cool-down while closed', () => {
    const breaker = createBreaker({}, manualClock().now);
    expect(breaker.retryInMs()).toBe(1000);
  });

  it('rejects invalid options with ConfigError', () => {
    const clock = manualClock();
    expect(() => createBreaker({ failureThreshold: 0 }, clock.now)).toThrow(ConfigError);
    expect(() => createBreaker({ coolDownMs: 1.5 }, clock.now)).toThrow(ConfigError);
    expect(() => createBreaker({ coolDownMs: Number.NaN }, clock.now)).toThrow(ConfigError);
  });
});
