/**
 * What a project's deletion needs of the tree before its rows go
 * (docs/ARCHITECTURE.md, "The one lock order", step 1).
 */
export abstract class ProjectCardLocks {
  /**
   * Every card of the project, locked FOR UPDATE in ascending id in the
   * caller's unit of work (a card created while the lock waited for its
   * parent included). From then until the transaction ends no relationship
   * value can come to name one of them: a value's foreign key takes FOR KEY
   * SHARE on the card it names, which waits. Their ids, ascending.
   */
  abstract lockProjectCards(projectId: number): Promise<number[]>;
}
