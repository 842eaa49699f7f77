/**
 * An object that forwards every member of `target` — own or inherited, methods bound to it,
 * getters and other values read live — and has no member `target` lacks: an optional method
 * (`refund`, `tryLimit`, `stats`, …) is present on the result exactly when it is on `target`.
 */
export function forwardAll<T extends object>(target: T): T {
  const forwarded: Record<PropertyKey, unknown> = {};
  for (
    let from: object | null = target;
    from !== null && from !== Object.prototype;
    from = Object.getPrototypeOf(from)
  ) {
    for (const name of Reflect.ownKeys(from)) {
      if (name === 'constructor' || Object.hasOwn(forwarded, name)) continue;
      const value = Reflect.get(target, name);
      Object.defineProperty(
        forwarded,
        name,
        typeof value === 'function'
          ? { value: value.bind(target), enumerable: true, writable: true, configurable: true }
          : { get: () => Reflect.get(target, name), enumerable: true, configurable: true },
      );
    }
  }
  return forwarded as T;
}
