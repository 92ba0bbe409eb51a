/**
 * Free names of the docs' `fragment` blocks (convention: docs/contributing/doc-blocks.md;
 * checked by test/package/doc-blocks.test.ts). Only fragments see this file: the
 * runner appends it to each fragment, whose module it then belongs to (so a name
 * declared here is visible in every fragment, and in no other block). A normal
 * block declares everything it uses.
 *
 * Declare names with `declare const`/`declare function`, with types imported at the
 * top, e.g.
 *
 *   import type { JitFunction, Tensor } from "batchwise";
 *   declare const x: Tensor;
 *   declare const f: JitFunction<[Tensor], Tensor>;
 *
 * A fragment must not declare a name this file declares. Keep fragments rare (at
 * most 10% of the blocks).
 */
