/**
 * Canonical, injective keys for plain data (cache keys of kernels, expressions
 * and attributes). `JSON.stringify` is not injective on numbers: it writes NaN,
 * Infinity and -Infinity as `null` and -0 as `0`, so two kernels that differ only
 * in such a constant would share a cache entry. Here every number keeps its
 * identity (`NaN`, `Infinity`, `-Infinity`, `-0` are distinct from each other,
 * from `null` and from `0`), strings are quoted, object keys are sorted, and
 * `undefined` fields are left out (an absent and an undefined optional field are
 * the same value to every reader of these objects).
 */

/** A number's text: distinct for every distinct value (NaN, ±Infinity, -0 included). */
export function numberKey(v: number): string {
  if (Object.is(v, -0)) return "-0";
  return String(v);
}

/**
 * The canonical key of plain data: numbers, strings, booleans, null, arrays and
 * plain objects (nested). Equal keys mean equal data and vice versa.
 *
 * @example
 *   canonicalKey({ v: NaN }) !== canonicalKey({ v: Infinity }); // JSON.stringify gives {"v":null} for both
 */
export function canonicalKey(v: unknown): string {
  switch (typeof v) {
    case "number":
      return numberKey(v);
    case "string":
      return JSON.stringify(v);
    case "boolean":
      return v ? "true" : "false";
    case "undefined":
      return "undefined";
    case "object": {
      if (v === null) return "null";
      if (Array.isArray(v)) {
        let s = "[";
        for (let i = 0; i < v.length; i++) s += (i > 0 ? "," : "") + canonicalKey(v[i]);
        return s + "]";
      }
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o)
        .filter((k) => o[k] !== undefined)
        .sort();
      let s = "{";
      keys.forEach((k, i) => (s += `${i > 0 ? "," : ""}${JSON.stringify(k)}:${canonicalKey(o[k])}`));
      return s + "}";
    }
    default:
      throw new TypeError(`canonicalKey: cannot key a ${typeof v}`);
  }
}
