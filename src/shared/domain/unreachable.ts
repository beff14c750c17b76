/**
 * The `default` of a switch that handles every member of a union: with a
 * member left out the argument is not `never`, and the compiler points at the
 * switch. Should a value outside the union arrive anyway, it throws (a 500).
 */
export function unreachable(value: never): never {
  throw new Error(`unhandled case: ${String(value)}`);
}
