import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/*
 * Zero cost when off: `@opentelemetry/api` is an optional peer. The core never names it, and
 * sluice/otel imports only its types (erased at build), so nothing of OpenTelemetry is loaded
 * by Sluice, whether or not the package is installed.
 */
const src = fileURLToPath(new URL('../../src', import.meta.url));
const files = readdirSync(src, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .map((file) => ({ path: relative(src, join(src, file)), text: readFileSync(join(src, file), 'utf8') }));

describe('OpenTelemetry imports', () => {
  it('no file outside src/observability mentions @opentelemetry', () => {
    const core = files.filter((f) => !f.path.startsWith('observability'));
    expect(core.length).toBeGreaterThan(50);
    expect(core.filter((f) => f.text.includes('@opentelemetry')).map((f) => f.path)).toEqual([]);
  });

  it('src/observability imports only types from @opentelemetry/api', () => {
    const otel = files.filter((f) => f.path.startsWith('observability'));
    const imports = otel.flatMap((f) =>
      [...f.text.matchAll(/^import (type )?[^;]*from '(@opentelemetry\/[^']+)'/gm)].map((m) => ({
        path: f.path,
        typeOnly: m[1] !== undefined,
        from: m[2],
      })),
    );
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((i) => !i.typeOnly || i.from !== '@opentelemetry/api')).toEqual([]);
  });
});
