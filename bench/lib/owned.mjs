// An interrupted bench takes its child processes with it, whoever sent the signal (a terminal
// signals the whole group, a script often only the parent): sections fork variants, variants
// may start redis-server.
const children = new Set();

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
  });
}

/** Registers a child process to be signalled when this process is; returns it. */
export function owned(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
