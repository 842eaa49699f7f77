/**
 * A key's block is kept beside its state, at the state's key plus this suffix: `prefix{key}:block`
 * shares the state's hash tag, so its Cluster slot, and no state key ends with it (each ends `}`).
 */
export const BLOCK_SUFFIX = ':block';
