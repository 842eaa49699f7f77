/**
 * A key's block is kept beside its state, at the state's key plus this suffix: `prefix{key}:block`
 * shares the state's hash tag, so its Cluster slot (`redisKeyName` keeps the tag non-empty and
 * whole, whatever the key holds), and no state key ends with it (each ends `}`).
 */
export const BLOCK_SUFFIX = ':block';
