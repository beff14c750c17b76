/**
 * A JSON object: not an array, a Buffer or a class instance. Compared by
 * shape rather than `=== Object.prototype` (the root of its prototype chain,
 * or none), so an object made in another realm still counts: test runners
 * hand the app values made in another realm than its code's, as do a VM
 * context and a worker message.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}
