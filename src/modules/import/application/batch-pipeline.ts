import { nextTurn } from '../../../shared/event-loop.js';
import type { BatchSequence, PreparedCards, SentBatch } from '../../cards/index.js';
import type { RowPlan } from '../domain/row-checker.js';

/** Rows written together: the new cards in one bulk creation, the matched cards in bulk. */
export interface WriteBatch {
  creates: RowPlan[];
  updates: Array<{ cardId: number; plan: RowPlan }>;
}

/**
 * The write pass's batches, in order, at most one in the database at a time.
 * A batch of new cards only, without models or comments, goes through the
 * cards' batch sequence when it is one statement there: it is sent as soon
 * as the statement before has returned, and the events of that one are
 * published while it runs, so the database waits for neither. Any other
 * batch is written whole once everything before it is done.
 */
export class BatchPipeline {
  private sequence: BatchSequence | undefined;
  /** The last batch sent through the sequence, until its events are published. */
  private sent: Promise<SentBatch> | undefined;
  /** The last batch written whole. */
  private whole: Promise<void> = Promise.resolve();

  constructor(
    private readonly open: () => Promise<BatchSequence>,
    private readonly writeWhole: (batch: WriteBatch, creates: PreparedCards) => Promise<void>,
  ) {}

  async write(batch: WriteBatch, preparing: Promise<PreparedCards>): Promise<void> {
    preparing.catch(() => undefined); // awaited below; never an unhandled rejection while the batch before settles
    const ready = mayBeOneStatement(batch) ? (await this.opened()).ready(await preparing) : undefined;
    if (!ready) {
      await this.finish();
      this.whole = this.writeWhole(batch, await preparing);
      this.whole.catch(() => undefined); // awaited by the next write; never an unhandled rejection meanwhile
      return;
    }
    await this.whole;
    const before = await this.sent;
    // Strictly after the statement before has returned (the sequence checks it).
    this.sent = ready.send();
    this.sent.catch(() => undefined);
    if (!before) return;
    // Publishing is CPU work that would hold the statement up on its way to
    // the driver (a few promise steps): it waits for the event loop's next
    // turn, which comes only once those have run.
    await nextTurn();
    await before.publish();
  }

  /** Everything before done: the whole write, the last sent batch returned and its events published. */
  async finish(): Promise<void> {
    await this.whole;
    const sent = this.sent;
    this.sent = undefined;
    await (await sent)?.publish();
  }

  /** After a failure: waits for what is still in the database, whatever its outcome. */
  async settled(): Promise<void> {
    await Promise.allSettled([this.whole, this.sent]);
  }

  private async opened(): Promise<BatchSequence> {
    if (!this.sequence) {
      await this.finish(); // the lock goes after the statements of the batches before
      this.sequence = await this.open();
    }
    return this.sequence;
  }
}

/** New cards only, without what is written card by card after the creation (a model, comments); the cards module decides the rest. */
function mayBeOneStatement(batch: WriteBatch): boolean {
  return !batch.updates.length && batch.creates.length > 0 && batch.creates.every((p) => p.modelId === undefined && !p.comments.length);
}
