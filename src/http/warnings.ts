import type { SluiceWarningCode } from '../warnings.js';

/** The warning codes of the HTTP layer; each fires at most once per middleware instance (see docs/errors.md). */
export type HttpWarningCode = Extract<SluiceWarningCode, `SLUICE_HTTP_${string}`>;
