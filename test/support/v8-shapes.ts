import { setFlagsFromString } from 'node:v8';

// V8's own view of an object's shape, for tests of hot paths: shapes, never times.
setFlagsFromString('--allow-natives-syntax');

/** False for an object in V8's dictionary mode, where every property read is a hash lookup. */
export const hasFastProperties = new Function('object', 'return %HasFastProperties(object)') as (
  object: object,
) => boolean;

/** Whether two objects share one hidden class (false once one's class was deprecated by a wider field). */
export const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
