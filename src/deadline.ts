/** What {@link withDeadline} resolves to when the deadline passed first. */
export const TIMED_OUT: unique symbol = Symbol('sluice.timedOut');

/**
 * Settles like `pending` if it settles within `deadlineMs`, else resolves to {@link TIMED_OUT}.
 *
 * A late settlement is handed to `onLate` and goes nowhere else: the caller has already
 * answered, so a late reply is never decided on, and a late rejection never becomes an
 * unhandled rejection. The work behind `pending` is not cancelled (a Redis script already
 * written to the socket still runs when the server comes back).
 *
 * When the timer fires, the verdict waits for the event loop's next I/O poll: after a stall
 * of this process (GC, a long task) the timer and the store's reply are both due, and the
 * reply already in the socket must win. Only a store that has not answered times out.
 */
export function withDeadline<T>(
  pending: Promise<T>,
  deadlineMs: number,
  onLate: () => void,
): Promise<T | typeof TIMED_OUT> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let late = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        late = true;
        resolve(TIMED_OUT);
      });
    }, deadlineMs);
    pending.then(
      (value) => {
        if (late) return onLate();
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (late) return onLate();
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
