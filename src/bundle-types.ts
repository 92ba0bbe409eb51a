/**
 * The types a bundle's declarations (`f.bundleTypes()`) import: shared by the
 * full entry (`batchwise`) and the lean runtime (`batchwise/runtime`), so that
 * `bundleTypes({ from: "batchwise/runtime" })` writes declarations that resolve
 * there. Types only: this module has no run-time code.
 */

/**
 * A bundle's argument layout, carrying the traced function's parameter types for
 * TypeScript in a property that exists only in the types (the value is the layout string).
 */
export type BundleArgs<A extends readonly unknown[]> = string & {
  /** The traced function's parameter types (never present at run time). */
  readonly "~args"?: A;
};
/** A bundle's result layout, carrying the traced function's result type (types only). */
export type BundleResults<R> = string & {
  /** The traced function's result type (never present at run time). */
  readonly "~results"?: R;
};
