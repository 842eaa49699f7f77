import { acquireScript, heldScript, renewOrReleaseScript } from '../../src/concurrency/redis-scripts.js';
import type { LuaScript } from '../../src/stores/redis/script.js';
import { adminScriptsOf } from '../../src/stores/redis/scripts/admin.js';
import { blockScript, unblockScript } from '../../src/stores/redis/scripts/block.js';
import { heartbeatScript } from '../../src/stores/redis/scripts/heartbeat.js';
import { scripts } from '../../src/stores/redis/scripts/index.js';
import { chargeScripts, refundScripts } from '../../src/stores/redis/scripts/refund.js';
import { resetScript } from '../../src/stores/redis/scripts/reset.js';

/** Every script Sluice sends to Redis, by its snapshot's name in src/stores/redis/lua/. */
export const shippedScripts: Readonly<Record<string, LuaScript>> = Object.fromEntries([
  ...Object.entries(scripts).flatMap(([name, script]) => [
    [name, script],
    [`${name}.per-master`, script.perNode],
  ]),
  ...Object.entries(refundScripts).map(([name, script]) => [`${name}.refund`, script]),
  ...Object.entries(chargeScripts).map(([name, script]) => [`${name}.charge`, script]),
  ...Object.entries(adminScriptsOf).flatMap(([name, { reward, penalty }]) => [
    [`${name}.reward`, reward],
    [`${name}.penalty`, penalty],
  ]),
  ['block', blockScript],
  ['unblock', unblockScript],
  ['heartbeat', heartbeatScript],
  ['holds.acquire', acquireScript],
  ['holds.held', heldScript],
  ['holds.renew-or-release', renewOrReleaseScript],
  ['reset', resetScript],
]);

/** The folder of the snapshots, relative to the test files in test/redis/. */
export const SNAPSHOTS = '../../src/stores/redis/lua';
