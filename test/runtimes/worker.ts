// A Cloudflare Worker: Hono with a Sluice memory limiter, keyed by CF-Connecting-IP. workerd.test.ts
// bundles it from the built package and runs it in workerd, without Node compatibility.
import { Hono } from 'hono';
import { createMemoryLimiter, gcra } from 'sluice';
import { rateLimit } from 'sluice/hono';

// One limiter per isolate. Workers allow no timer at global scope, so no prune timer: the table
// stays bounded by maxKeys, and expiry is judged from timestamps either way.
const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 3, periodMs: 60_000 }), pruneIntervalMs: 0 });

const app = new Hono();
app.use(rateLimit({ limiter, clientAddress: (c) => c.req.header('cf-connecting-ip') }));
app.get('/', (c) => c.text('ok'));

export default app;
