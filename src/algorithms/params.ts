import { ConfigError, docsLink, InvalidParamsError } from '../errors.js';
import type { Algorithm, AlgorithmParams } from './types.js';

/** Distinct parameter sets one core keeps built; past it the cache starts over (plans are few). */
const CACHE_SIZE = 64;

/**
 * Builds a core's `withParams`: the same algorithm with some of its options replaced for one
 * call. Each name in `params` must be one of `names` (an option of this algorithm); the values
 * are checked by the algorithm's own factory, so a call is held to the construction rules.
 * Options `params` leaves out keep their construction value (a GCRA `burst` left out of both
 * defaults to the call's `limit`). Built algorithms are cached by their numbers.
 *
 * @throws {InvalidParamsError} naming the parameter: `params` not an object, a name the
 * algorithm does not take (e.g. `windowMs` on GCRA: a key holds one algorithm's state, so
 * another algorithm's numbers are refused, never read into it), or a value its factory refuses.
 */
export function paramsResolver<O extends object>(
  kind: string,
  names: readonly (keyof O & string)[],
  options: O,
  build: (options: O) => Algorithm,
): (params: AlgorithmParams) => Algorithm {
  // Built algorithms by their numbers, one Map level per name: no key string built per call.
  let cache = new Map<number | undefined, unknown>();
  let cached = 0;
  const allowed = new Set<string>(names);
  return (params) => {
    if (typeof params !== 'object' || params === null || Array.isArray(params)) {
      throw new InvalidParamsError(`params must be an object of ${kind} options (${names.join(', ')})`);
    }
    for (const name in params) {
      if (!allowed.has(name)) {
        throw new InvalidParamsError(
          `unknown parameter '${name}' for ${kind}: it takes ${names.join(', ')} (a key holds one algorithm's state)`,
        );
      }
    }
    let level: Map<number | undefined, unknown> = cache;
    const last = names.length - 1;
    for (let i = 0; i < last; i++) {
      const value = params[names[i] as string];
      let next = level.get(value) as Map<number | undefined, unknown> | undefined;
      if (next === undefined) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const lastValue = params[names[last] as string];
    const hit = level.get(lastValue) as Algorithm | undefined;
    if (hit !== undefined) return hit;
    const built = buildFrom(params);
    if (++cached > CACHE_SIZE) {
      cache = new Map();
      cached = 1;
      return built;
    }
    level.set(lastValue, built);
    return built;
  };

  // The factory's own checks, as at construction; its ConfigError becomes this call's error.
  function buildFrom(params: AlgorithmParams): Algorithm {
    const merged: Record<string, unknown> = { ...(options as Record<string, unknown>) };
    for (const name of names) if (params[name] !== undefined) merged[name] = params[name];
    try {
      return build(merged as O);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      const suffix = ` ${docsLink(error.code)}`;
      throw new InvalidParamsError(`params: ${error.message.slice(0, -suffix.length)}`);
    }
  }
}

/**
 * The algorithm a call with `params` decides with: `algorithm` itself without params, else
 * `algorithm.withParams(params)`.
 *
 * @throws {InvalidParamsError} when the algorithm takes no per-call parameters or refuses these.
 */
export function algorithmFor(algorithm: Algorithm, params: AlgorithmParams | undefined): Algorithm {
  if (params === undefined) return algorithm;
  if (algorithm.withParams === undefined) {
    throw new InvalidParamsError(`algorithm '${algorithm.name}' takes no per-call params`);
  }
  return algorithm.withParams(params);
}

/** Whether two algorithms decide alike: the same kind and the same numbers. */
export function sameParams(a: Algorithm, b: Algorithm): boolean {
  if (a === b) return true;
  if (a.name !== b.name || a.scriptParams.length !== b.scriptParams.length) return false;
  return a.scriptParams.every((value, i) => value === b.scriptParams[i]);
}
