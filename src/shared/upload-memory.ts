import { ServiceBusyError } from './domain/domain-error.js';

/**
 * Seconds a client refused for memory waits before trying again: uploads
 * and downloads held by other requests end within seconds.
 */
export const UPLOAD_MEMORY_RETRY_AFTER_SECONDS = 5;

/**
 * Bytes of uploads and file-URL downloads the whole process holds in memory
 * at once (UPLOAD_MEMORY_MAX_BYTES). Each request's own caps (MAX_UPLOAD_BYTES)
 * bound one request; without this, a hundred clients uploading at once made
 * the process hold gigabytes and die of it, taking every other user down.
 * A request takes its bytes as they arrive through a `MemoryHold` and gives
 * them all back when it ends; one that cannot fit is refused (503, retry).
 */
export class UploadMemoryBudget {
  private used = 0;
  private refused = 0;
  /** What holds may do to the figures; nobody else changes them. */
  private readonly account: MemoryAccount = {
    take: (bytes) => {
      if (this.used + bytes > this.maxBytes) {
        this.refused++;
        return false;
      }
      this.used += bytes;
      return true;
    },
    giveBack: (bytes) => {
      this.used -= bytes;
    },
  };

  constructor(readonly maxBytes: number) {}

  /** Bytes held now, by every request. */
  get inUse(): number {
    return this.used;
  }

  /** Takes refused since the start (a metric). */
  get refusals(): number {
    return this.refused;
  }

  /** A request's share, empty until it takes bytes. */
  hold(): MemoryHold {
    return new MemoryHold(this.account);
  }
}

interface MemoryAccount {
  take(bytes: number): boolean;
  giveBack(bytes: number): void;
}

/**
 * The bytes one request holds of the budget. Its owner releases it when the
 * request is done with them (a finally, or the response's end), whatever
 * happened: a hold never released would shrink the budget for good.
 */
export class MemoryHold {
  private held = 0;
  private released = false;

  constructor(private readonly account: MemoryAccount) {}

  /** Counts `bytes` more; false, counting nothing, when the budget cannot fit them or the hold was released. */
  take(bytes: number): boolean {
    if (this.released || !this.account.take(bytes)) return false;
    this.held += bytes;
    return true;
  }

  /** Gives back all it holds; later calls do nothing, and later takes are refused. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.account.giveBack(this.held);
    this.held = 0;
  }
}

/** The 503 of a request refused for memory. */
export function uploadMemoryFull(): ServiceBusyError {
  return new ServiceBusyError(
    `The server holds as many uploads in memory as it may; retry in ${UPLOAD_MEMORY_RETRY_AFTER_SECONDS} s`,
    UPLOAD_MEMORY_RETRY_AFTER_SECONDS,
  );
}
