/** Anything with ioredis's `info(section)`. */
interface InfoClient {
  info(section: string): Promise<string>;
}

/** EVALSHA + EVAL calls redis-server executed since its last CONFIG RESETSTAT (INFO commandstats). */
export async function scriptCalls(admin: InfoClient): Promise<number> {
  const stats = await admin.info('commandstats');
  const calls = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  return calls('evalsha') + calls('eval');
}
