/**
 * Argument specs as text, as the CLI's `--spec` takes them: `<dtype>[<batch labels>; <base>]`.
 *
 * - `float32[B; 3,3]`: a `(B; 3,3)` float32 tensor (`spec("float32", ["B"], [3, 3])`);
 * - `f32[B,N; 3]`: two batch dims; `int32[; 4]`: none; `f32[B; ]`: a scalar per batch element;
 * - `f32[B, ~N; 3]`: a jagged tensor (`jaggedSpec("float32", [3])`): values `(T; 3)`, int32 offsets.
 *
 * dtypes: the names of the dtype table (ir/dtype.ts `DTYPES`: float32, float64, int32, uint32, bool, the
 * narrow uint8, int8, uint16, int16 and float16), or as the IR prints them (`DTYPE_SHORT`: f32, i16, …).
 * Batch labels are names (letters, digits, `_`); only their number matters, sizes stay run-time.
 */
import { DTYPE_FROM_SHORT, DTYPE_SHORT, DTYPES, isDType, type DType } from "../../ir/dtype.js";
import { DTypeError, TraceError } from "../../ir/errors.js";
import { jaggedSpec, spec, type ArgSpec } from "../jit.js";

const LABEL = /^[A-Za-z_]\w*$/;

/**
 * Parses one argument spec as the CLI's `--spec` takes it, `<dtype>[<batch labels>; <base>]`:
 * `"f32[B; 3,3]"` is `spec("float32", ["B"], [3, 3])`, `"f32[B, ~N; 3]"` is
 * `jaggedSpec("float32", [3])`, `"int32[; 4]"` has no batch dims. dtypes are the
 * dtype table's names (`DTYPES`) or the IR's short names (`f32`, `u8`, …); only the
 * number of batch labels matters. A bad spec is a TraceError (DTypeError for the dtype)
 * naming it and the problem.
 */
export function parseSpec(text: string): ArgSpec {
  if (typeof text !== "string")
    throw new TraceError(
      `parseSpec: a spec must be a string such as "f32[B; 3,3]", got ${text === null ? "null" : typeof text}`,
    );
  const shown = JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
  const bad = (why: string): never => {
    throw new TraceError(`spec ${shown}: ${why}`);
  };
  const m = /^\s*([A-Za-z0-9_]*)\s*\[([^\]]*)\]\s*$/.exec(text);
  if (m === null) return bad(`expected <dtype>[<batch labels>; <base shape>], e.g. "f32[B; 3,3]" or "int32[; 4]"`);
  const name = m[1]!;
  if (name === "") return bad("no dtype before '['");
  const dtype: DType | undefined = isDType(name) ? name : DTYPE_FROM_SHORT[name];
  if (dtype === undefined)
    throw new DTypeError(
      `spec ${shown}: unknown dtype "${name}" (${DTYPES.join(", ")}, or ${DTYPES.map((d) => DTYPE_SHORT[d]).join(", ")})`,
    );
  const parts = m[2]!.split(";");
  if (parts.length !== 2) {
    const inner = m[2]!.trim();
    const hint = /^[\d,\s]*$/.test(inner)
      ? `write "${name}[; ${inner}]" for no batch dims, "${name}[B; ${inner}]" for one`
      : `as in "${name}[B; 3,3]"`;
    return bad(
      parts.length === 1
        ? `no ';' between the batch labels and the base shape (${hint})`
        : "more than one ';' (one separates the batch labels from the base shape)",
    );
  }
  const list = (s: string): string[] => (s.trim() === "" ? [] : s.split(",").map((x) => x.trim()));
  const batch = list(parts[0]!);
  const base = list(parts[1]!).map((d) => {
    if (!/^\d{1,9}$/.test(d))
      bad(
        d === ""
          ? "an empty base size (two commas, or a trailing one)"
          : `base size "${d}" is not a non-negative integer (base shapes are static; batch dims go before the ';')`,
      );
    return Number(d);
  });
  const jagged = batch.some((b) => b.startsWith("~"));
  for (const [i, b] of batch.entries()) {
    const label = jagged && i === 1 ? b.slice(1) : b;
    if (!LABEL.test(label)) {
      bad(
        b === ""
          ? "an empty batch label (two commas, or a trailing one)"
          : b.startsWith("~")
            ? `a jagged dim "${b}" must be the second of exactly two batch dims, as in "${name}[B, ~N; ${parts[1]!.trim()}]"`
            : `batch label "${b}" is not a name (letters, digits, _), as in "${name}[B; ${parts[1]!.trim()}]"`,
      );
    }
  }
  if (jagged && batch.length !== 2)
    bad(`a jagged spec has exactly two batch dims, the second marked '~', as in "${name}[B, ~N; ${parts[1]!.trim()}]"`);
  const seen = new Set<string>();
  for (const b of batch) {
    const l = b.replace(/^~/, "");
    if (seen.has(l)) bad(`batch label "${l}" appears twice (each batch dim has its own label)`);
    seen.add(l);
  }
  return jagged ? jaggedSpec(dtype, base) : spec(dtype, batch, base);
}
