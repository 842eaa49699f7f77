import { fileURLToPath } from 'node:url';
import { type BuildFailure, build } from 'esbuild';

/**
 * Bundles the module `source` (its imports resolved from this folder) as a platform without Node's built-ins does (workerd, a browser): ES modules,
 * no `node:` or bare built-in resolvable. Resolves `sluice` through the package's own exports,
 * so it bundles the built dist/. Rejects with esbuild's errors, each naming what failed to resolve.
 */
export async function bundleForWeb(source: string): Promise<string> {
  const result = await build({
    stdin: { contents: source, resolveDir: fileURLToPath(new URL('.', import.meta.url)), loader: 'ts' },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['workerd', 'worker', 'browser'],
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]?.text ?? '';
}

/** esbuild's error texts of a failed build, e.g. `Could not resolve "crypto"`. */
export function buildErrors(error: unknown): string[] {
  return ((error as BuildFailure).errors ?? []).map((e) => `${e.location?.file ?? ''}: ${e.text}`);
}
