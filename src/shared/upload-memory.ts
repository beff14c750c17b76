import { ConcurrencyLimitedError, ServiceBusyError, type DomainError } from './domain/domain-error.js';

/**
 * Seconds a client refused for memory waits before trying again: uploads
 * and downloads held by other requests end within seconds.
 */
export const UPLOAD_MEMORY_RETRY_AFTER_SECONDS = 5;

/**
 * Who a hold's bytes count against besides the process: a user id; a client
 * address (`clientAddress`), for a body read before its credential is
 * checked; or nobody (work no request made).
 */
export type MemoryOwner = number | ClientAddress | undefined;
type ClientAddress = `address:${string}`;

/** The owner of a body read before its user is known: the client's address (`req.ip`: the proxy's `X-Forwarded-For` when TRUST_PROXY trusts the proxy). */
export const clientAddress = (ip: string | undefined): ClientAddress => `address:${ip ?? 'unknown'}`;

/**
 * Bytes of uploads and file-URL downloads the whole process holds in memory
 * at once (UPLOAD_MEMORY_MAX_BYTES). Each request's own caps (MAX_UPLOAD_BYTES)
 * bound one request; without this, a hundred clients uploading at once made
 * the process hold gigabytes and die of it, taking every other user down.
 * A request takes its bytes as they arrive through a `MemoryHold` and gives
 * them all back when it ends; one that cannot fit is refused (503, retry).
 *
 * One user's holds together take at most `perOwnerBytes`
 * (UPLOAD_MEMORY_USER_SHARE_PERCENT of the budget): a slow upload holds its
 * bytes for as long as its body takes, so a dozen slow uploads from one user
 * held the whole budget and everyone else got 503s. Past their share a user
 * is refused (429) while the others go on. Per user rather than per
 * credential: a user holds many API keys and OAuth tokens. A body read
 * before its credential is checked counts against its client's address
 * instead, with the same share: one client opening many connections can no
 * longer fill the budget with bodies it declares and never sends.
 */
export class UploadMemoryBudget {
  private used = 0;
  private refused = 0;
  private readonly usedBy = new Map<NonNullable<MemoryOwner>, number>();

  constructor(
    readonly maxBytes: number,
    readonly perOwnerBytes = maxBytes,
  ) {}

  /** Bytes held now, by every request. */
  get inUse(): number {
    return this.used;
  }

  /** Bytes held now by one user's requests (or one address's bodies). */
  inUseBy(owner: NonNullable<MemoryOwner>): number {
    return this.usedBy.get(owner) ?? 0;
  }

  /** Takes refused since the start, for the budget or a share (a metric). */
  get refusals(): number {
    return this.refused;
  }

  /** A request's share, empty until it takes bytes; `owner`: the user it counts against too. */
  hold(owner?: MemoryOwner): MemoryHold {
    return new MemoryHold(this.account(owner), typeof owner === 'string' ? addressShareFull : userShareFull);
  }

  /** What one owner's holds may do to the figures; nobody else changes them. */
  private account(owner: MemoryOwner): MemoryAccount {
    return {
      take: (bytes) => {
        const mine = owner === undefined ? 0 : this.inUseBy(owner);
        // A full process is a 503 for everyone, whoever holds it; only then is the user's own share the reason.
        const refusal = this.used + bytes > this.maxBytes ? 'budget' : mine + bytes > this.perOwnerBytes ? 'share' : undefined;
        if (refusal) {
          this.refused++;
          return refusal;
        }
        this.used += bytes;
        if (owner !== undefined) this.usedBy.set(owner, mine + bytes);
        return undefined;
      },
      giveBack: (bytes) => {
        this.used -= bytes;
        if (owner === undefined) return;
        const left = this.inUseBy(owner) - bytes;
        if (left > 0) this.usedBy.set(owner, left);
        else this.usedBy.delete(owner);
      },
    };
  }
}

type Refusal = 'budget' | 'share';

interface MemoryAccount {
  take(bytes: number): Refusal | undefined;
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
  private refusedFor: Refusal = 'budget';

  constructor(
    private readonly account: MemoryAccount,
    private readonly shareFull: () => DomainError,
  ) {}

  /** Counts `bytes` more; false, counting nothing, when the budget or the user's share cannot fit them or the hold was released. */
  take(bytes: number): boolean {
    if (this.released) return false;
    const refusal = this.account.take(bytes);
    if (refusal) {
      this.refusedFor = refusal;
      return false;
    }
    this.held += bytes;
    return true;
  }

  /** The answer to the take refused last: 503 when the process's budget is full, 429 when the owner's share is. */
  refusal(): DomainError {
    return this.refusedFor === 'share' ? this.shareFull() : uploadMemoryFull();
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
function uploadMemoryFull(): ServiceBusyError {
  return new ServiceBusyError(
    `The server holds as many uploads and request bodies in memory as it may; retry in ${UPLOAD_MEMORY_RETRY_AFTER_SECONDS} s`,
    UPLOAD_MEMORY_RETRY_AFTER_SECONDS,
  );
}

/** The 429 of a request refused because its user's uploads in progress hold their whole share. */
function userShareFull(): ConcurrencyLimitedError {
  return new ConcurrencyLimitedError(
    `Your uploads and file-URL downloads in progress hold as much memory as one user may; retry in ${UPLOAD_MEMORY_RETRY_AFTER_SECONDS} s, or once they are done`,
    UPLOAD_MEMORY_RETRY_AFTER_SECONDS,
    'RATE.CONCURRENT_UPLOADS',
  );
}

/** The 429 of a body refused because the bodies its client's address is sending hold that address's whole share. */
function addressShareFull(): ConcurrencyLimitedError {
  return new ConcurrencyLimitedError(
    `The request bodies your address is sending hold as much memory as one client may; retry in ${UPLOAD_MEMORY_RETRY_AFTER_SECONDS} s, or once they are done`,
    UPLOAD_MEMORY_RETRY_AFTER_SECONDS,
    'RATE.CONCURRENT_BODIES',
  );
}
