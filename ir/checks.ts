/**
 * A type-level completeness check for the extension points (docs/contributing/): a constant
 * typed `NoneLeft<Missing, "label">` and initialised to `true` compiles only when `Missing`
 * is `never`; otherwise `tsc` names the members at fault under `label`, e.g. "Type
 * 'boolean' is not assignable to type '{ readonly opsWithoutTheirMethod: "hypot"; }'".
 */
export type NoneLeft<Missing, Label extends string> = [Missing] extends [never]
  ? true
  : { readonly [K in Label]: Missing };
