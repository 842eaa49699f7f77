import { describe, it } from 'vitest';
import { appScenarios } from './support/app-scenarios.js';
import { harnesses } from './support/harnesses.js';

// The application recipes of docs/http.md (rules that do not apply, keys from the body, counting
// by outcome, headers of nested limits), every adapter, through real HTTP.
describe.each(harnesses)('$name', (harness) => {
  it.each(appScenarios)('$name', (scenario) => scenario.run(harness));
});
