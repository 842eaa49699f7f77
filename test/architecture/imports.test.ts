import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/*
 * The layer map of docs/ARCHITECTURE.md, enforced: which folders of src/ each folder may import,
 * and which packages. `vocabulary` is the files at src/ root (decision, limiter, errors, validate,
 * deadline) and the Algorithm interface (algorithms/types.ts), which every layer shares; `sluice`
 * is src/index.ts, the main entry.
 */
const LAYERS = {
  vocabulary: { folders: [], packages: [] },
  algorithms: { folders: ['vocabulary'], packages: [] },
  'stores/memory': { folders: ['vocabulary', 'algorithms'], packages: [] },
  'stores/redis': { folders: ['vocabulary', 'algorithms'], packages: ['node:crypto'] },
  lease: { folders: ['vocabulary', 'algorithms'], packages: [] },
  shard: { folders: ['vocabulary', 'algorithms'], packages: [] },
  policy: { folders: ['vocabulary', 'algorithms', 'stores/memory'], packages: [] },
  http: { folders: ['vocabulary'], packages: ['ipaddr.js', 'proxy-addr', 'node:http'] },
  'http/express': { folders: ['vocabulary', 'http'], packages: ['node:http'] },
  'http/fastify': { folders: ['vocabulary', 'http'], packages: ['fastify'] },
  'http/hono': { folders: ['vocabulary', 'http'], packages: ['hono'] },
  'http/koa': { folders: ['vocabulary', 'http'], packages: ['node:http'] },
  'http/nestjs': { folders: ['vocabulary', 'http'], packages: ['@nestjs/common', '@nestjs/core', 'node:http'] },
  concurrency: { folders: ['vocabulary', 'stores/redis'], packages: [] },
  outbound: { folders: ['vocabulary', 'lease', 'stores/redis', 'http'], packages: [] },
  testing: { folders: ['vocabulary', 'algorithms', 'concurrency'], packages: ['node:assert/strict', 'fast-check'] },
  // Type imports of @opentelemetry/api only: test/observability/imports.test.ts checks that.
  observability: {
    folders: ['vocabulary', 'lease', 'policy', 'stores/redis'],
    packages: ['@opentelemetry/api'],
  },
  sluice: { folders: ['vocabulary', 'algorithms', 'stores/memory', 'lease', 'shard'], packages: [] },
} satisfies Record<string, { folders: string[]; packages: string[] }>;
type Layer = keyof typeof LAYERS;

const root = fileURLToPath(new URL('../..', import.meta.url));
const src = join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(src, path).split(sep).join('/')] : [];
  });
}

/** The layer of a file under src/ (path relative to src/, '/'-separated): its longest listed folder. */
function layerOf(file: string): Layer | undefined {
  if (file === 'index.ts') return 'sluice';
  // The Algorithm interface is the contract every layer speaks (Limiter.algorithm); the cores are the layer.
  if (file === 'algorithms/types.ts') return 'vocabulary';
  if (!file.includes('/')) return 'vocabulary';
  const folders = Object.keys(LAYERS).filter((layer) => file.startsWith(`${layer}/`));
  return folders.sort((a, b) => b.length - a.length)[0] as Layer | undefined;
}

/**
 * Every specifier a source text imports or re-exports, dynamic imports and `import()` types
 * included. Parsed, not scanned: after a regex holding a quote inside a template literal
 * (src/http/headers.ts) `ts.preProcessFile` reads the imports of TSDoc `@example` blocks as the
 * file's own, and misses real ones.
 */
function specifiers(text: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const specifier =
      ts.isImportDeclaration(node) || ts.isExportDeclaration(node)
        ? node.moduleSpecifier
        : ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword
          ? node.arguments[0]
          : ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)
            ? node.argument.literal
            : undefined;
    if (specifier && ts.isStringLiteral(specifier)) found.push(specifier.text);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile('file.ts', text, ts.ScriptTarget.Latest, true));
  return found;
}

/** Why `file` (relative to src/) may not import `specifier`, or undefined when it may. */
function violation(file: string, specifier: string): string | undefined {
  const layer = layerOf(file) as Layer;
  const allowed: { folders: string[]; packages: string[] } = LAYERS[layer];
  if (!specifier.startsWith('.')) {
    return allowed.packages.includes(specifier) ? undefined : `${file} (${layer}) → package ${specifier}`;
  }
  const target = posix.normalize(posix.join(posix.dirname(file), specifier));
  if (target.startsWith('..')) return `${file} (${layer}) → ${specifier} (outside src/)`;
  const targetLayer = layerOf(target.replace(/\.js$/, '.ts'));
  if (targetLayer === layer || allowed.folders.includes(targetLayer as string)) return undefined;
  return `${file} (${layer}) → ${target} (${targetLayer})`;
}

const files = sourceFiles(src);

describe('import rules (docs/ARCHITECTURE.md)', () => {
  it('every file under src/ belongs to a listed layer', () => {
    expect(files.filter((file) => layerOf(file) === undefined)).toEqual([]);
  });

  it('each layer imports only the folders and packages its row allows', () => {
    const violations = files.flatMap((file) =>
      specifiers(readFileSync(join(src, file), 'utf8')).flatMap((specifier) => violation(file, specifier) ?? []),
    );
    expect(violations).toEqual([]);
  });

  it('names only folders that exist, so the map cannot go stale', () => {
    const present = new Set(files.map(layerOf));
    expect(Object.keys(LAYERS).filter((layer) => !present.has(layer as Layer))).toEqual([]);
  });

  it('reads imports by parsing: code after a regex with a quote, not the imports of a TSDoc example', () => {
    const text = [
      "import { ConfigError } from '../errors.js';",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source of a template literal (src/http/headers.ts)
      'const quoted = (value: string) => `"${value.replace(/[\\\\"]/g, \'\\\\$&\')}"`;',
      '/**',
      ' * @example',
      ' * ```ts',
      " * import { draft7Headers } from 'sluice/http';",
      ' * ```',
      ' */',
      "export type Lazy = typeof import('./lazy.js');",
      "export const load = () => import('./later.js');",
    ].join('\n');
    expect(specifiers(text)).toEqual(['../errors.js', './lazy.js', './later.js']);
  });

  it('catches an upward import, a package a layer does not allow, and a path out of src/', () => {
    // The imports this re-layout removed: sharding and the heartbeat crossed policy ↔ stores/redis.
    expect(violation('stores/redis/shard.ts', '../../policy/divide.js')).toMatch(/→ policy\/divide\.js \(policy\)/);
    expect(violation('policy/heartbeat.ts', '../stores/redis/script.js')).toMatch(/\(stores\/redis\)/);
    expect(violation('policy/heartbeat.ts', 'node:crypto')).toMatch(/package node:crypto/);
    expect(violation('policy/fallback.ts', '../stores/memory/memory-limiter.js')).toBeUndefined();
    expect(violation('index.ts', '../demo/cli.js')).toMatch(/outside src/);
  });
});
