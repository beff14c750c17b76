/**
 * THE LOCK ORDER of every write that spans modules. Each use case of `cards`
 * is one `uow.run` that calls the lower modules' APIs in this order, so that
 * two transactions always wait for each other instead of deadlocking (a
 * card created without values or a group is one statement instead,
 * `uow.runStatement`, which takes steps 1 and 2 in this order):
 *
 *  0. (imports) the imports into the project, one at a time (an advisory
 *     lock only imports take, ProjectImportLock); the project row, then the
 *     existing fields filled, FOR KEY SHARE in ascending id: only deletions
 *     of a project or a field conflict, and they take that row first of all
 *     (WorkspaceApi.requireProject in a transaction, FieldsApi.holdFields).
 *  1. card-hierarchy, card rows: FOR UPDATE in ascending id (the parent on a
 *     creation; card, old parent, new parent's chain and subtree on a move;
 *     parent and subtree on a deletion). Grouping's own use cases take
 *     FOR KEY SHARE on their cards here instead.
 *  2. card-hierarchy, the project's counter row (refs, totals): creation,
 *     deletion, a move that changes what is hidden.
 *     A move's or a deletion's sibling position shifts are plain updates of
 *     card rows not locked in 1, so they come only after the grouping locks
 *     of 3 (prepareMove / lockForRelocation / finishMove, and likewise
 *     prepareDeletion / lockForCardDeletion / finishDeletion): a membership
 *     change on a sibling holds its group and then touches the sibling (5).
 *  3. grouping: group type rows (FOR SHARE for memberships, FOR NO KEY UPDATE
 *     for the type's own changes), ascending id; then group rows, ascending
 *     id; then memberships (a column's positions change under its group's lock).
 *  4. fields: the project's field-name lock, then value rows of the cards
 *     already locked in step 1.
 *  5. touching the cards (`updated_at`), ascending id.
 *
 * Files named by URL are downloaded before step 1 (FieldsApi.prepareValues),
 * so no lock is held while a remote server is slow. See docs/ARCHITECTURE.md.
 */
export {};
