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
 *     With the project row, in that statement, the caller's membership row
 *     FOR SHARE (any write checking its access to a project or, when
 *     creating one, to a team in its transaction): a removal or a role
 *     change, which locks only membership rows, waits for the write.
 *  1. card-hierarchy, card rows: FOR UPDATE in ascending id, every row the
 *     write will change (the parent on a creation; card, old parent, new
 *     parent's chain, subtree and the siblings whose positions shift on a
 *     move; parent, subtree and later siblings on a deletion). A card the
 *     write finds it needs only when it holds higher ones (the tree changed
 *     while it waited) is taken only if free (NOWAIT; else the unit runs
 *     again), never waited for. Grouping's own use cases take
 *     FOR KEY SHARE on their cards here instead (which waits for, or is
 *     waited for by, a tree write holding them). A unit writing one
 *     card's values takes the cards its relationship values name here too
 *     (FOR KEY SHARE, which their foreign key would take anyway): those
 *     below the card before it when known by then, those above it after.
 *     A deletion takes the cards outside its subtree whose relationship
 *     values name a card of it (they lose those values: touched in 5.)
 *     once it holds the subtree and the counter row, only if free (NOWAIT,
 *     FOR NO KEY UPDATE: the touch's lock): a value write holding one may
 *     be waiting for a card of the subtree.
 *  2. card-hierarchy, the project's counter row (refs, totals): creation,
 *     deletion, a move that changes what is hidden.
 *  3. grouping: group type rows (FOR SHARE for memberships and card
 *     deletions, FOR NO KEY UPDATE for the type's own changes), ascending id;
 *     then group rows, ascending id; then memberships (a column's positions
 *     change under its group's lock). A write takes all of its groups in one
 *     pass (lockForRelocation, lockForCardDeletion) before it changes any.
 *  4. fields: the project's field-name lock, then value rows of the cards
 *     already locked in step 1 (a deletion removes the relationship values
 *     naming its subtree itself, before its cascade would). A write that
 *     reaches this step holding other steps' rows (a new card's values, an
 *     import's) takes the cards its relationship values name only if free
 *     (NOWAIT; else the unit runs again), as is a card below the written
 *     one learned only after step 1.
 *     A write of date values holds those fields' rows FOR SHARE, ascending
 *     id, before its value rows (their options decide what a value may be;
 *     an option change takes the row FOR UPDATE: FieldDefinitionsService.
 *     updateField). The bulk writes hold them too: writeNewValues and
 *     writeValuesMany before their scalar rows; values written along a
 *     creation (FieldsApi.newValuesAlong) just after its insert, whose
 *     values' keys hold the rows FOR KEY SHARE from then on (an option
 *     change's FOR UPDATE waits for that); none of the three when its
 *     caller holds the fields since step 0 (fieldsHeld: an import, whose
 *     hold that FOR UPDATE waits for). The guarded statement takes it
 *     in its guard, before the card row: out of this order, a deadlock only
 *     with its own project's deletion, broken and run again
 *     (docs/ARCHITECTURE.md, "A date field's options and its values").
 *  5. touching the cards (`updated_at`), ascending id: cards held since 1.
 *
 * A foreign key locks too: FOR KEY SHARE on the row it names when a row is
 * inserted (taken in its step first), and again when the transaction updates
 * a row it already inserted or updated, then out of order (a card's parent;
 * a group's scope card and type; a membership's card, group and type). So a
 * write changes such a row once (a model change locks its card rather than
 * touching it; a group's rename and move is one statement), unless it holds
 * what the key names already (a tree write holds its cards' parents).
 *
 * Files named by URL are downloaded before step 1 (FieldsApi.prepareValues),
 * so no lock is held while a remote server is slow. See docs/ARCHITECTURE.md.
 */
export {};
