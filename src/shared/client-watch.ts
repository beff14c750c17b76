import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Whether the client of the request whose work runs here is still there
 * (docs/RELIABILITY.md, "A request whose client left stops its work"). The
 * HTTP layer (`http/client-gone.ts`) runs each request's route inside
 * `whileClientWaits` with a `ClientWatch` that it tells when the client
 * closed the connection before the answer went out; whatever the route
 * awaits sees it:
 *
 * - the pool's connections cancel the request's statements
 *   (`persistence/request-cancellation.ts`);
 * - a spreadsheet's parse stops its worker (the import module's sandbox,
 *   which takes an `AbortSignal`: `ClientWatch.signal`).
 */
const requestWatch = new AsyncLocalStorage<ClientWatch>();

/**
 * One request's client: there until `leave` is called. Not an
 * AbortController: one per request and a listener per statement cost, with
 * Node's EventTarget, 0 to 16 % more server CPU per request in bench:ab
 * (listing +16 %, health +8 %); this plain list of callbacks is within the
 * noise (−4 to +5 %) of the build without any of it.
 */
export class ClientWatch {
  private left = false;
  private held = false;
  private listeners: Array<() => void> | undefined;
  private abort: AbortController | undefined;

  get gone(): boolean {
    return this.left;
  }

  /**
   * The request's work runs to its end from now on, whether its client stays
   * or not: its answer is kept for the client's retry (an Idempotency-Key's).
   */
  hold(): void {
    this.held = true;
  }

  /** The client closed its connection: tells every listener, once (never once the request is held). */
  leave(): void {
    if (this.left || this.held) return;
    this.left = true;
    const listeners = this.listeners;
    this.listeners = undefined;
    for (const listener of listeners ?? []) listener();
  }

  /** Calls `listener` when the client leaves (never if it has left already); returns what stops listening. */
  onLeave(listener: () => void): () => void {
    if (this.left) return () => undefined;
    (this.listeners ??= []).push(listener);
    return () => {
      const at = this.listeners?.indexOf(listener) ?? -1;
      if (at >= 0) this.listeners!.splice(at, 1);
    };
  }

  /** The same as an AbortSignal, made on first use (for APIs that take one). */
  signal(): AbortSignal {
    if (!this.abort) {
      this.abort = new AbortController();
      const abort = this.abort;
      if (this.left) abort.abort();
      else this.onLeave(() => abort.abort());
    }
    return this.abort.signal;
  }
}

/** Runs `work` (a request's route) so that what it starts stops once `watch`'s client leaves. */
export function whileClientWaits<T>(watch: ClientWatch, work: () => T): T {
  return requestWatch.run(watch, work);
}

/** The client of the request whose work runs here; undefined outside one (start-up, the CLI, after-commit work). */
export function clientWatch(): ClientWatch | undefined {
  return requestWatch.getStore();
}

/**
 * Runs `work` with no request's client: work that must finish once a change
 * committed, whoever is still waiting for the answer (after-commit hooks:
 * the file clean-up, after-commit event handlers).
 */
export function apartFromClient<T>(work: () => T): T {
  return requestWatch.exit(work);
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
