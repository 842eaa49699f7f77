/** An environment variable the runner (runtimes.test.ts) sets; a clear error when run by hand without it. */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the runtimes through \`npm run test:runtimes\``);
  return value;
}
