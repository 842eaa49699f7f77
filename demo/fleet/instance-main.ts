/*
 * Entry of a fleet instance process (forked by the demo, compiled to demo/dist/fleet-instance.js).
 * argv[2] is the JSON InstanceConfig; the instance reports `{ port, metricsPort }` or `{ error }` over IPC and
 * exits when the parent disconnects, so it never outlives the demo.
 */
import { type Instance, type InstanceConfig, startInstance } from './instance.js';

let instance: Instance | undefined;
process.once('disconnect', () => {
  (instance?.close() ?? Promise.resolve()).finally(() => process.exit(0));
});

try {
  instance = await startInstance(JSON.parse(process.argv[2] ?? '{}') as InstanceConfig);
  process.send?.({ port: instance.port, metricsPort: instance.metricsPort });
} catch (error) {
  process.send?.({ error: error instanceof Error ? error.message : String(error) }, () => process.exit(1));
}
