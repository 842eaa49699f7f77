import {
  defineScript,
  type LuaScript,
  runScript,
  type ScriptClient,
  toScriptClient,
} from '../../src/stores/redis/index.js';
import { scripts } from '../../src/stores/redis/scripts/index.js';

/*
 * Redis expires keys on its own clock, while property tests run on a manual clock that jumps or
 * stands still: a key written with 1 ms to live at test time t could vanish before the next call
 * at t on Redis's clock, and the comparison would measure the machine's load. This client appends
 * one step to each production script, after every decision and inside the same script (where
 * Redis's clock stands still): hold each key for an hour; and each TTL a decision sets is an hour too. Decisions then rest on the stored times
 * alone, which also checks that each script reads state past its own expiry as fresh (what Redis
 * sees when client clocks run ahead). The TTLs the real scripts set are tested on their own, in
 * test/redis and test/algorithms/redis-hygiene.test.ts.
 */
const HOLD = "for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], 3600000) end\nreturn replies\n";
/*
 * Holding after the decisions comes too late for a key a decision wrote with a TTL of a ms or
 * two: Redis deletes a key at once when PEXPIRE's expiry is already past by its own clock, read
 * again after the TTL was added, which happens whenever its millisecond ticks inside the command
 * (test/redis/held-keys.test.ts). So the held script also sees a `redis` whose PEXPIRE holds.
 */
const HOLD_EACH_WRITE = `local redis = setmetatable({}, { __index = redis })
do
  local call = redis.call
  redis.call = function(command, ...)
    if command == 'PEXPIRE' then return call(command, (...), 3600000) end
    return call(command, ...)
  end
end
`;

const heldScripts = new Map<string, LuaScript>(
  await Promise.all(
    Object.values(scripts).map(async (script) => {
      const source = script.source.replace(/return replies\n$/, HOLD);
      if (source === script.source) throw new Error('the script no longer ends with `return replies`');
      return [script.sha, await defineScript(HOLD_EACH_WRITE + source)] as const;
    }),
  ),
);

/** Runs algorithm scripts with their keys held for an hour; any other script runs as it is. */
export function holdingKeys(client: ScriptClient): ScriptClient {
  const run = (script: LuaScript, keys: readonly string[], args: readonly (string | number)[]) =>
    runScript(client, heldScripts.get(script.sha) ?? script, keys, args);
  return {
    evalsha: (sha, keys, args) => {
      const script = heldScripts.get(sha);
      return script ? run(script, keys, args) : client.evalsha(sha, keys, args);
    },
    eval: async (source, keys, args) => run(await defineScript(source), keys, args),
  };
}

/** Any supported client (ioredis, iovalkey, node-redis; single, Cluster, Sentinel), with keys held. */
export function held(client: unknown): ScriptClient {
  return holdingKeys(toScriptClient(client));
}
