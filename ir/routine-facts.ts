/**
 * The routines of the `routine` op and their shape and dtype facts, in one table
 * (docs/contributing/new-routine.md). The op's type rule (ir/ops.ts) and the code
 * generators read these facts; the algorithms live in ir/routines.ts, in a table
 * over the same names, so a routine named here without its algorithm, or its
 * facts, fails `tsc`. Kept apart from the algorithms: the runtime page ships the
 * type rule, not the algorithms.
 */

/** The routines of the `routine` op. */
export const ROUTINE_NAMES = ["lu", "lu_solve", "cholesky", "qr", "eigh", "svd", "sort"] as const;
export type RoutineName = (typeof ROUTINE_NAMES)[number];

export interface RoutineFacts {
  /** The dtypes it runs on: the float dtypes, or (`sort`) every dtype but bool. */
  readonly dtypes: "float" | "numeric";
  /** A second input of right-hand sides `b (n, k)`, whose column count is the spec's `cols` (`lu_solve`). */
  readonly rhs: boolean;
  /**
   * The result's base from the first input's base `(m, n)`, the integer argument and
   * the second input's base `b` (empty without one); undefined when the shapes do not fit.
   */
  readonly base: (m: number, n: number, arg: number, b: readonly number[]) => readonly number[] | undefined;
}

const square =
  (out: (n: number) => readonly number[]) =>
  (m: number, n: number): readonly number[] | undefined =>
    m === n ? out(n) : undefined;

/** The facts of each routine (the output layouts are described in ir/routines.ts). */
export const ROUTINE_FACTS: { readonly [K in RoutineName]: RoutineFacts } = {
  lu: { dtypes: "float", rhs: false, base: square((n) => [n, n + 2]) },
  lu_solve: {
    dtypes: "float",
    rhs: true,
    base: (m, n, _arg, b) => (n === m + 2 && b[0] === m ? [m, b[1]!] : undefined),
  },
  cholesky: { dtypes: "float", rhs: false, base: square((n) => [n, n]) },
  qr: { dtypes: "float", rhs: false, base: (m, n, arg) => (arg === m || arg === n ? [m, arg + n + 1] : undefined) },
  eigh: { dtypes: "float", rhs: false, base: square((n) => [2 * n, n]) },
  svd: { dtypes: "float", rhs: false, base: (m, n) => (m >= n ? [m + n + 1, n] : undefined) },
  sort: { dtypes: "numeric", rhs: false, base: (m, n) => [m, 4 * n] },
};
