/**
 * Resolves on the event loop's next turn, after the I/O that arrived
 * meanwhile has been handled: long CPU work (parsing thousands of rows)
 * awaits it between slices, so a database answer or another request does
 * not wait for the whole of it.
 */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
