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
  const cache = new Map<string, Algorithm>();
  return (params) => {
    if (typeof params !== 'object' || params === null || Array.isArray(params)) {
      throw new InvalidParamsError(`params must be an object of ${kind} options (${names.join(', ')})`);
    }
    let id = '';
    for (const name in params) {
      if (!(names as readonly string[]).includes(name)) {
        throw new InvalidParamsError(
          `unknown parameter '${name}' for ${kind}: it takes ${names.join(', ')} (a key holds one algorithm's state)`,
        );
      }
    }
    for (const name of names) id += `${String(params[name])},`;
    const cached = cache.get(id);
    if (cached !== undefined) return cached;
    const merged: Record<string, unknown> = { ...(options as Record<string, unknown>) };
    for (const name of names) if (params[name] !== undefined) merged[name] = params[name];
    let built: Algorithm;
    try {
      built = build(merged as O);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      const suffix = ` ${docsLink(error.code)}`;
      throw new InvalidParamsError(`params: ${error.message.slice(0, -suffix.length)}`);
    }
    if (cache.size >= CACHE_SIZE) cache.clear();
    cache.set(id, built);
    return built;
  };
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
