/**
 * The lock order of every write that spans modules is written once, in
 * docs/ARCHITECTURE.md, "The one lock order" (steps 0 to 5). This file holds
 * no copy: it stays only for the comments that still name it.
 */
export {};
