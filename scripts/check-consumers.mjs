// Packs the package as npm would publish it, installs the tarball beside this repository's
// node_modules, and loads every subpath from a CommonJS and an ES module consumer. It proves the
// exports map, the types conditions' files exist, that an error class is the same object in
// every entry of one format (so `instanceof ConfigError` holds for an error thrown by
// `sluice/redis`), and that the failure policy of the CommonJS build degrades a store failure of
// the ES module build (both builds loaded in one process: the dual-package hazard).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = join(root, 'node_modules', '.cache', 'sluice-consumers');
rmSync(dir, { recursive: true, force: true });
mkdirSync(join(dir, 'node_modules', 'sluice'), { recursive: true });
const [{ filename }] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: root }));
execFileSync('tar', ['-xzf', join(dir, filename), '-C', join(dir, 'node_modules', 'sluice'), '--strip-components=1']);

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const subpaths = Object.keys(manifest.exports)
  .filter((p) => p !== './package.json')
  .map((p) => p.replace(/^\./, 'sluice'));

const check = (load) => `
const subpaths = ${JSON.stringify(subpaths)};
const modules = {};
for (const p of subpaths) modules[p] = ${load};
const { ConfigError, gcra } = modules.sluice;
let thrown;
try { modules['sluice/redis'].createRedisLimiter({ client: {}, algorithm: gcra({ limit: 1, periodMs: 1000 }) }); } catch (e) { thrown = e; }
if (!(thrown instanceof ConfigError)) throw new Error('ConfigError from sluice/redis is not the ConfigError of sluice');
console.log(subpaths.length + ' subpaths load');
`;
// An ESM Redis limiter on a closed port, wrapped by the CJS failure policy: a degraded decision.
const mixed = `
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { gcra } from 'sluice';
import { createRedisLimiter } from 'sluice/redis';
const { withFailurePolicy } = createRequire(import.meta.url)('sluice/policy');
const probe = createServer().listen(0, '127.0.0.1');
await new Promise((resolve) => probe.once('listening', resolve));
const { port } = probe.address();
await new Promise((resolve) => probe.close(resolve));
const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
client.on('error', () => {});
const redis = createRedisLimiter({ client, algorithm: gcra({ limit: 5, periodMs: 1000 }), onWarning: false });
const limiter = withFailurePolicy(redis, { failure: 'open', onWarning: false, deadlineMs: 2000 });
const decision = await limiter.limit('k');
client.disconnect();
if (decision.degraded !== true || decision.allowed !== true) throw new Error('CJS policy did not degrade an ESM store failure: ' + JSON.stringify(decision));
console.log('ESM sluice/redis under CJS sluice/policy: degraded (' + decision.degradedReason + ')');
`;
writeFileSync(join(dir, 'consumer.cjs'), check('require(p)'));
writeFileSync(join(dir, 'consumer.mjs'), `${check('await import(p)')}`);
writeFileSync(join(dir, 'mixed.mjs'), mixed);
for (const file of ['consumer.cjs', 'consumer.mjs', 'mixed.mjs']) {
  const out = execFileSync(process.execPath, [file], { cwd: dir, encoding: 'utf8' });
  console.log(`${file}: ${out.trim()}`);
}
rmSync(dir, { recursive: true, force: true });
