import type { Attributes, Span, SpanKind, SpanStatusCode, Tracer } from '@opentelemetry/api';
import type { StoreOperation } from '../stores/redis/script.js';
import { ATTRIBUTES as A } from './names.js';

// The enums' values, written out: a type import keeps @opentelemetry/api out of the bundle.
const CLIENT = 2 as SpanKind.CLIENT;
const ERROR = 2 as SpanStatusCode.ERROR;

/** Operations whose reply holds four integers per decision, `allowed` first. */
const DECIDING: ReadonlySet<StoreOperation> = new Set(['decide', 'batch']);

/** The span of one round trip, ended by `succeeded` or `failed`. */
export interface StoreSpan {
  succeeded(reply: unknown): void;
  failed(error: unknown, kind: string | undefined): void;
}

/**
 * Starts a client span `sluice.store <operation>` (a child of the active span, when a context
 * manager is registered) carrying the decision count, and at the end how many were admitted.
 */
export function startStoreSpan(
  tracer: Tracer,
  attributes: Attributes,
  operation: StoreOperation,
  decisions: number,
): StoreSpan {
  const span: Span = tracer.startSpan(`sluice.store ${operation}`, {
    kind: CLIENT,
    attributes: { ...attributes, [A.decisionCount]: decisions },
  });
  return {
    succeeded(reply) {
      if (DECIDING.has(operation) && Array.isArray(reply)) {
        let allowed = 0;
        let denied = 0;
        for (let at = 0; at < 4 * decisions; at += 4) {
          if (reply[at] === 1) allowed++;
          else if (reply[at] === 0) denied++;
        }
        span.setAttributes({ [A.allowedCount]: allowed, [A.deniedCount]: denied });
      }
      span.end();
    },
    failed(error, kind) {
      if (kind !== undefined) {
        span.setAttribute(A.errorKind, kind);
        span.setStatus({ code: ERROR, message: error instanceof Error ? error.message : String(error) });
      }
      if (error instanceof Error) span.recordException(error);
      span.end();
    },
  };
}
