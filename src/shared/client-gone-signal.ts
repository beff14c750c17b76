import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The signal of the request whose work runs here, aborted when its client
 * closes the connection before the answer went out (docs/RELIABILITY.md,
 * "A request whose client left stops its work"). The HTTP layer
 * (`http/client-gone.ts`) runs each request's route inside
 * `whileClientWaits`; whatever the route awaits sees the signal:
 *
 * - the pool's connections cancel the request's statements
 *   (`persistence/request-cancellation.ts`);
 * - a spreadsheet's parse stops its worker (the import module's sandbox).
 */
const requestSignal = new AsyncLocalStorage<AbortSignal>();

/** Runs `work` (a request's route) so that what it starts stops once `signal` aborts. */
export function whileClientWaits<T>(signal: AbortSignal, work: () => T): T {
  return requestSignal.run(signal, work);
}

/** The signal of the request whose work runs here; undefined outside one (start-up, the CLI, after-commit work). */
export function clientGoneSignal(): AbortSignal | undefined {
  return requestSignal.getStore();
}

/**
 * Runs `work` with no request's signal: work that must finish once a change
 * committed, whoever is still waiting for the answer (after-commit hooks:
 * the file clean-up, after-commit event handlers).
 */
export function apartFromClient<T>(work: () => T): T {
  return requestSignal.exit(work);
}

/**
 * Work refused or stopped because its request's client had gone. SQLSTATE
 * 57014 like a statement PostgreSQL cancelled: the unit of work does not run
 * it again, and nobody reads the answer.
 */
export class ClientGoneError extends Error {
  readonly code = '57014';
  constructor(what = 'canceling statement') {
    super(`${what}: the request's client closed its connection`);
    this.name = 'ClientGoneError';
  }
}
