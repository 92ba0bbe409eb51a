/** Scratch tsconfig.json files for the package tests' tsc and TypeDoc runs. */

/**
 * The text of a tsconfig.json for an ES2022 program resolved as NodeNext: `target`,
 * `module` and `moduleResolution`, then `options` in their order, then `rest` (`files`, `include`).
 */
export function nodeNextTsconfig(options: Record<string, unknown>, rest: Record<string, readonly string[]>): string {
  return JSON.stringify({
    compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", ...options },
    ...rest,
  });
}
