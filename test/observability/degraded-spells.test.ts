import { describe, expect, it } from 'vitest';
import { createDegradedSpells } from '../../src/degraded-spells.js';
import { manualClock } from '../../src/testing/index.js';
import { hasFastProperties } from '../support/v8-shapes.js';

describe('degraded spells', () => {
  it("keep fast properties, so each decision's observe is no dictionary lookup", () => {
    const clock = manualClock();
    const spells = createDegradedSpells<'timeout'>(clock.now);
    expect(hasFastProperties(spells)).toBe(true);
    expect(spells.observe(true, 'timeout')).toEqual({ state: 'degraded', reason: 'timeout' });
    expect(spells.active()).toBe(true);
    clock.advance(5);
    expect(spells.observe(false, 'timeout')).toMatchObject({ state: 'recovered', durationMs: 5 });
    expect(spells.active()).toBe(false);
  });
});
