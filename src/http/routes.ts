import { ConfigError } from '../errors.js';
import type { RoutePolicy } from './options.js';
import type { HttpWarningCode } from './warnings.js';

/** How a `routes` entry is compared with a request's path or route pattern. */
export interface RouteMatching {
  /** `/Login` and `/login` are different routes. Default `false`, as Express and @koa/router. */
  caseSensitive?: boolean;
  /** `/login/` and `/login` are different routes. Default `false`, as Express and @koa/router. */
  strict?: boolean;
}

/** A compiled `routes` table. */
export interface RouteTable<Req> {
  /** The policy of a request, found by its canonical path or route pattern. */
  lookup(method: string, routeId: string, matching: Required<RouteMatching>): RoutePolicy<Req> | undefined;
  /** The entries no route of `registered` (method, pattern) matches, quoted. */
  unregistered(registered: readonly (readonly [string, string])[]): string[];
}

const METHOD = /^[A-Z]+$/;
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * The canonical form a `routes` entry and a request path are compared in, so that every
 * spelling a router sends to one handler finds that handler's policy:
 *
 * 1. cut at `?` or `#`;
 * 2. drop `;` parameters of each segment (`/login;x` → `/login`);
 * 3. decode percent-encoded unreserved characters (RFC 3986 §2.3: `/%6Cogin` → `/login`);
 * 4. collapse repeated slashes (`//login` → `/login`);
 * 5. resolve `.` and `..` segments (RFC 3986 §5.2.4), as `new URL()` does;
 * 6. unless `strict`, drop a trailing slash (`/login/` → `/login`);
 * 7. unless `caseSensitive`, lower-case (`/LOGIN` → `/login`).
 *
 * Steps 2–5 join spellings that Express, Fastify and @koa/router answer with 404 as well: such
 * a request is charged under the route's policy though no handler runs (never the reverse).
 */
export function canonicalPath(path: string, { caseSensitive, strict }: Required<RouteMatching>): string {
  const end = path.search(/[?#]/);
  let out = (end === -1 ? path : path.slice(0, end))
    .replace(/;[^/]*/g, '')
    .replace(/%([0-9A-Fa-f]{2})/g, (encoded, hex: string) => {
      const char = String.fromCharCode(Number.parseInt(hex, 16));
      return UNRESERVED.test(char) ? char : encoded.toUpperCase();
    })
    .replace(/\/{2,}/g, '/');
  out = removeDotSegments(out);
  if (!strict && out.length > 1 && out.endsWith('/')) out = out.slice(0, -1);
  return caseSensitive ? out : out.toLowerCase();
}

function removeDotSegments(path: string): string {
  if (!/(^|\/)\.\.?(\/|$)/.test(path)) return path;
  const kept: string[] = [];
  const segments = path.split('/');
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    if (segment === '..') kept.splice(Math.max(1, kept.length - 1));
    else if (segment !== '.') kept.push(segment);
    if (last && (segment === '.' || segment === '..')) kept.push('');
  });
  const joined = kept.join('/');
  return joined.startsWith('/') ? joined : `/${joined}`;
}

/** Throws {@link ConfigError} unless `matching` is an object of booleans; fills in the defaults. */
export function checkRouteMatching(matching: unknown): Required<RouteMatching> {
  if (matching === undefined) return { caseSensitive: false, strict: false };
  if (typeof matching !== 'object' || matching === null) {
    throw new ConfigError(`routeMatching must be an object, got ${String(matching)}`);
  }
  const { caseSensitive = false, strict = false } = matching as RouteMatching;
  for (const [name, value] of Object.entries({ caseSensitive, strict })) {
    if (typeof value !== 'boolean')
      throw new ConfigError(`routeMatching.${name} must be a boolean, got ${String(value)}`);
  }
  return { caseSensitive, strict };
}

/**
 * Compiles a `routes` table. Entries are `"METHOD /path"` or `"/path"`; a request finds the
 * entry of its method first, then the method-less one, both in canonical form (see
 * {@link canonicalPath}). Entries that can never match (a lower-case method, a path without a
 * leading `/`, with `?` or `#`, or one another entry hides) are reported through `warn`.
 */
export function compileRoutes<Req>(
  routes: Readonly<Record<string, RoutePolicy<Req>>>,
  defaults: Required<RouteMatching>,
  warn: (code: HttpWarningCode, message: string) => void,
): RouteTable<Req> {
  const entries = Object.entries(routes).map(([spec, policy]) => ({ spec, policy, ...parseSpec(spec) }));
  const tables = new Map<string, Map<string, RoutePolicy<Req>>>();
  const tableFor = (matching: Required<RouteMatching>) => {
    const id = `${matching.caseSensitive} ${matching.strict}`;
    let table = tables.get(id);
    if (table === undefined) {
      table = new Map();
      for (const { method, path, policy } of entries) {
        const key = `${method} ${canonicalPath(path, matching)}`;
        if (!table.has(key)) table.set(key, policy);
      }
      tables.set(id, table);
    }
    return table;
  };

  const unreachable = entries
    .filter(
      ({ method, path }) => (method !== '*' && !METHOD.test(method)) || !path.startsWith('/') || /[?#\s]/.test(path),
    )
    .map(({ spec }) => JSON.stringify(spec));
  const seen = new Map<string, string>();
  for (const { spec, method, path } of entries) {
    const key = `${method} ${canonicalPath(path, defaults)}`;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, spec);
    else unreachable.push(`${JSON.stringify(spec)} (hidden by ${JSON.stringify(first)})`);
  }
  if (unreachable.length > 0) {
    warn(
      'SLUICE_HTTP_ROUTE_UNREACHABLE',
      `routes entries that can never match a request: ${unreachable.join(', ')}. Write "METHOD /path" with an upper-case method (see docs/http.md#how-routes-entries-match).`,
    );
  }

  return {
    lookup(method, routeId, matching) {
      if (entries.length === 0) return undefined; // nothing to find: no path to canonicalise
      const table = tableFor(matching);
      const path = canonicalPath(routeId, matching);
      return table.get(`${method} ${path}`) ?? table.get(`* ${path}`);
    },
    unregistered(registered) {
      const known = new Set<string>();
      for (const [method, pattern] of registered) {
        const path = canonicalPath(pattern, defaults);
        known.add(`${method} ${path}`).add(`* ${path}`);
      }
      return entries
        .filter(({ method, path }) => !known.has(`${method} ${canonicalPath(path, defaults)}`))
        .map(({ spec }) => JSON.stringify(spec));
    },
  };
}

function parseSpec(spec: string): { method: string; path: string } {
  const space = spec.indexOf(' ');
  if (space === -1) return { method: '*', path: spec };
  return { method: spec.slice(0, space), path: spec.slice(space + 1) };
}
