import { describe, expect, it } from 'vitest';
import { fixedWindow } from '../../src/algorithms/fixed-window.js';
import { ConfigError } from '../../src/errors.js';
import { createHttpLimiter } from '../../src/http/index.js';
import { createMemoryLimiter } from '../../src/stores/memory/memory-limiter.js';
import { appScenarios } from './support/app-scenarios.js';
import { harnesses } from './support/harnesses.js';

// The application recipes of docs/http.md (rules that do not apply, keys from the body, counting
// by outcome, headers of nested limits), every adapter, through real HTTP.
describe.each(harnesses)('$name', (harness) => {
  it.each(appScenarios)('$name', (scenario) => scenario.run(harness));
});

describe('counting by outcome needs a refund', () => {
  const window = createMemoryLimiter({ algorithm: fixedWindow({ limit: 5, windowMs: 60_000 }) });

  it('countWhen on a limiter that cannot refund (fixed window) is a ConfigError naming the limit', () => {
    const build = () => createHttpLimiter({ limits: { name: 'login', limiter: window, countWhen: (s) => s >= 400 } });
    expect(build).toThrow(ConfigError);
    expect(build).toThrow('countWhen of limit "login" needs a limiter that can refund (GCRA, token bucket)');
  });

  it('a route countWhen applies to its limits, so a fixed-window limit there fails when the route is checked', () => {
    const http = createHttpLimiter({ limiter: window });
    expect(() => http.checkRoute({ countWhen: (s) => s >= 400 })).toThrow(/countWhen of limit "default"/);
    const entry = { 'POST /login': { countWhen: (s: number) => s >= 400 } };
    expect(() => createHttpLimiter({ limiter: window, routes: entry })).toThrow(ConfigError);
    expect(() =>
      createHttpLimiter({ limiter: window, routes: { 'POST /login': { resetWhen: () => true } } }),
    ).not.toThrow();
  });
});
