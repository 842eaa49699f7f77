/**
 * What a leased limiter does not meet of the conformance suite's reservation properties. Units
 * refunded to an instance go back on its local lease first, each placed at the next slot below the
 * lease's end (docs/leasing.md), so right after a refund the instance may report one unit less
 * than the remote alone for under one emission interval: it trails, never leads. Settling,
 * cancelling and their errors are held exactly on memory and Redis.
 */
export const leaseRefundTrails = {
  'reservation-settle': 'a refund kept on the local lease may report one unit less for under one emission interval',
} as const;
