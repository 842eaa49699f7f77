import { createRequire } from 'node:module';
import { cac } from 'cac';
import { INSTALL_HINT, locateRedisServer } from '../bench/lib/redis-process.mjs';
import { requireInteger } from '../src/validate.js';
import { loadPatterns } from './fleet/loads.js';
import { fleetModes } from './fleet/modes.js';
import { formatFleetReport } from './fleet/report.js';
import { type FleetOptions, runFleet } from './fleet/run.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

interface FleetFlags {
  requests: unknown;
  limit: unknown;
  periodMs: unknown;
  instances: unknown;
  redisUrl?: string;
  modes?: string;
  loads?: string;
  json?: boolean;
  metrics?: boolean;
}

const cli = cac('sluice');

cli
  .command('fleet', 'Show why a fleet needs a shared limiter: per-instance memory vs shared Redis')
  .option('--requests <n>', 'Requests sent per row', { default: 1000 })
  .option('--limit <n>', 'Units per period for the one client key', { default: 100 })
  .option('--period-ms <ms>', 'Period of the limit, in milliseconds', { default: 3_600_000 })
  .option('--instances <n>', 'Instance processes per row', { default: 3 })
  .option('--redis-url <url>', 'Use this Redis instead of starting a throwaway redis-server (default: $REDIS_URL)')
  .option('--modes <names>', `Rows to run, comma-separated (default: ${fleetModes.map((mode) => mode.name).join(',')})`)
  .option(
    '--loads <names>',
    `Load patterns, one table each, comma-separated (default: ${loadPatterns.map((load) => load.name).join(',')})`,
  )
  .option('--json', 'Print the report as JSON (progress still goes to stderr)')
  .option(
    '--metrics',
    'Instrument each instance (sluice/otel), serve its Prometheus /metrics on a loopback port, and print a scrape summary',
  )
  .action(fleet);

cli.help();
cli.version(version);

async function fleet(flags: FleetFlags): Promise<void> {
  const options: FleetOptions = {
    requests: requireInteger('--requests', flags.requests),
    limit: requireInteger('--limit', flags.limit),
    periodMs: requireInteger('--period-ms', flags.periodMs),
    instances: requireInteger('--instances', flags.instances),
    modes: list(flags.modes),
    loads: list(flags.loads),
    metrics: flags.metrics === true,
    log: (line) => process.stderr.write(`${line}\n`),
  };
  const hint = (text: string) => (flags.json ? process.stderr : process.stdout).write(`${text}\n\n`);
  const url = flags.redisUrl ?? process.env.REDIS_URL;
  const command = url ? undefined : locateRedisServer();
  if (!(await import('ioredis').then(() => true).catch(() => false))) {
    hint('The Redis rows need ioredis: npm install ioredis');
  } else if (url) {
    options.redis = { url };
  } else if (command) {
    options.redis = { command };
  } else {
    hint(INSTALL_HINT);
  }
  const report = await runFleet(options);
  process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatFleetReport(report)}\n`);
}

function list(names: string | undefined): string[] | undefined {
  return names?.split(',').map((name) => name.trim());
}

// Turn Ctrl-C and SIGTERM into an exit, whose hook kills every process the demo started.
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: stopping the demo's processes\n`);
    process.exit(code);
  });
}

try {
  cli.parse(process.argv, { run: false });
  if (cli.matchedCommand) {
    await cli.runMatchedCommand();
  } else if (!cli.options.help && !cli.options.version) {
    if (cli.args.length > 0) {
      process.stderr.write(`sluice: unknown command '${cli.args[0]}'\n\n`);
      process.exitCode = 2;
    }
    cli.outputHelp();
  }
} catch (error) {
  process.stderr.write(`sluice: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
