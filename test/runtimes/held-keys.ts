import type { ScriptClient } from 'sluice/redis';

// The suite's clock is manual while Redis expires keys on its own clock (test/support/held-keys.ts
// says why that races). This client holds each key for an hour after every script, inside it,
// using only the public ScriptClient seam: EVALSHA answers NOSCRIPT, so every call runs the held
// source through EVAL.
const HOLD_MS = 3_600_000;

/** Runs every script with its keys held for an hour after it decides. */
export function holdingKeys(client: ScriptClient): ScriptClient {
  return {
    evalsha: () => Promise.reject(new Error('NOSCRIPT held scripts run through EVAL')),
    eval: (source, keys, args) => client.eval(held(source), keys, args),
  };
}

/** The script as a local function, then PEXPIRE on its keys; a `#!lua` flags line stays first. */
function held(source: string): string {
  const shebang = source.startsWith('#!') ? source.slice(0, source.indexOf('\n') + 1) : '';
  const body = source.slice(shebang.length);
  return `${shebang}local function decide()\n${body}\nend
local reply = decide()
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ${HOLD_MS}) end
return reply
`;
}
