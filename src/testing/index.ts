export { type ManualClock, manualClock } from './clock.js';
export { type Capability, type ConformanceTarget, runConformance, type TestApi } from './conformance.js';
export { type HoldConformanceTarget, runHoldConformance } from './holds.js';
export { type AlgorithmProfile, type PropertyName, profiles } from './profiles.js';
export { gcraReference } from './reference/gcra.js';
export type { ReferenceModel } from './reference/types.js';
