/**
 * Thrown by a guard that has written the whole answer itself (an
 * Idempotency-Key's replay), to keep the route's handler from running:
 * the exception filter sends nothing for it, and logs nothing.
 */
export class AnswerSent extends Error {
  constructor() {
    super('the answer was sent before the route ran');
    this.name = 'AnswerSent';
  }
}
