/**
 * Parses the IR text form of ir/print.ts back into a graph (the types are re-inferred and checked).
 *
 * IR text may come from outside (a bundle, a file), so the parser is a plain
 * scanner: every step is linear in the length of the text (no backtracking
 * regular expression sees a whole line), and whatever is wrong with the text is
 * an IRError naming the line.
 */
import { DTYPE_FROM_SHORT } from "./dtype.js";
import { BatchwiseError, IRError } from "./errors.js";
import { makeGraph, Node, type Graph } from "./graph.js";
import { isOp, type Attrs, type AttrValue } from "./ops.js";
import { checkElementCount } from "./shapes.js";
import { fmtType, type Dim, type TensorType } from "./types.js";

/** A line (or part of one) as quoted in an error: at most 80 characters. */
function quote(s: string): string {
  return s.length > 80 ? `${s.slice(0, 80)}… (${s.length} characters)` : s;
}

function fail(line: number, msg: string): never {
  throw new IRError(`line ${line}: ${msg}`);
}

/**
 * Calls `at(i, c, depth)` on each character `c` of `s` from `from` on that is outside
 * quoted strings (with their `\` escapes), `depth` being the nesting of brackets and
 * braces after it; stops when `at` returns true. Linear.
 */
function scanUnquoted(s: string, from: number, at: (i: number, c: string, depth: number) => boolean): void {
  let depth = 0;
  let quoted = false;
  for (let i = from; i < s.length; i++) {
    const c = s[i]!;
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else {
      if (c === "[" || c === "{" || c === "(") depth++;
      else if (c === "]" || c === "}" || c === ")") depth--;
      if (at(i, c, depth)) return;
    }
  }
}

/**
 * The index of the bracket closing the one at `open` (`(`, `[` or `{`), skipping
 * quoted strings, or -1. Linear.
 */
function closing(s: string, open: number): number {
  let end = -1;
  scanUnquoted(s, open, (i, c, depth) => {
    if (depth > 0 || (c !== "]" && c !== "}" && c !== ")")) return false;
    if (depth === 0) end = i;
    return true;
  });
  return end;
}

/** Splits on commas that are not inside brackets, braces or quotes. */
function splitTop(s: string): string[] {
  const parts: string[] = [];
  let start = 0;
  scanUnquoted(s, 0, (i, c, depth) => {
    if (c === "," && depth === 0) {
      parts.push(s.slice(start, i).trim());
      start = i + 1;
    }
    return false;
  });
  const last = s.slice(start).trim();
  if (last.length > 0 || parts.length > 0) parts.push(last);
  return parts;
}

/** What fmtNumber prints: decimal or exponent notation, `-0`, `NaN`, `±Infinity`. */
const NUMBER = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function parseNumber(s: string, line: number): number {
  if (s === "NaN") return NaN;
  if (s === "Infinity") return Infinity;
  if (s === "-Infinity") return -Infinity;
  if (!NUMBER.test(s)) fail(line, `not a number: ${quote(s)}`);
  return Number(s);
}

/** A symbolic batch dim as the passes write them: `b0`, `b0*b1`, `(b0-1)/2`, `b0[1:10]`, `~r0`, `b0|b1`, `r0-1`. */
const SYMBOL = /^[\w*/+\-|~().[\]:]+$/;

export function parseType(s: string, line = 0): TensorType {
  const t = s.trim();
  const open = t.indexOf("[");
  const dtype = open > 0 ? DTYPE_FROM_SHORT[t.slice(0, open)] : undefined;
  if (dtype === undefined || !t.endsWith("]")) fail(line, `not a type: ${quote(s)}`);
  const inner = t.slice(open + 1, -1);
  const semi = inner.indexOf(";");
  if (semi < 0 || inner.indexOf(";", semi + 1) >= 0)
    fail(line, `not a type (one ';' between batch and base dims): ${quote(s)}`);
  const dims = (part: string): string[] => (part.trim() === "" ? [] : part.split(",").map((d) => d.trim()));
  const size = (d: string, what: string): number => {
    const n = Number(d);
    if (!Number.isSafeInteger(n)) fail(line, `${what} size ${quote(d)} is not a valid size`);
    return n;
  };
  const batch: Dim[] = dims(inner.slice(0, semi)).map((d) => {
    if (/^\d+$/.test(d)) return size(d, "batch");
    if (!SYMBOL.test(d)) fail(line, `batch dim ${quote(d)} is neither a size nor a symbol`);
    return d;
  });
  const base = dims(inner.slice(semi + 1)).map((d) => {
    if (!/^\d+$/.test(d)) fail(line, `base dims are numbers, got ${quote(d)}`);
    return size(d, "base");
  });
  const type = { dtype, batch, base };
  try {
    checkElementCount("type", type);
  } catch (e) {
    fail(line, (e as Error).message);
  }
  return type;
}

const IDENT = /^[A-Za-z_]\w*$/;

function parseAttrValue(s: string, line: number): AttrValue {
  if (s === "true" || s === "false") return s === "true";
  if (s.startsWith("[")) {
    if (!s.endsWith("]")) fail(line, `bad list ${quote(s)}`);
    const inner = s.slice(1, -1).trim();
    return inner === "" ? [] : inner.split(",").map((x) => parseNumber(x.trim(), line));
  }
  if (s.startsWith('"')) {
    try {
      const v: unknown = JSON.parse(s);
      if (typeof v === "string") return v;
    } catch {
      // reported below
    }
    fail(line, `bad string ${quote(s)}`);
  }
  if (IDENT.test(s) && s !== "NaN" && s !== "Infinity") return s;
  return parseNumber(s, line);
}

function parseAttrs(s: string, line: number): Attrs {
  const attrs = new Map<string, AttrValue>();
  for (const part of splitTop(s.slice(1, -1))) {
    const eq = part.indexOf("=");
    if (eq < 0) fail(line, `bad attribute ${quote(part)}`);
    const key = part.slice(0, eq).trim();
    if (!IDENT.test(key)) fail(line, `bad attribute name ${quote(key)}`);
    if (attrs.has(key)) fail(line, `attribute ${key} is given twice`);
    attrs.set(key, parseAttrValue(part.slice(eq + 1).trim(), line));
  }
  // fromEntries makes own properties, so even a key "__proto__" stays data (and the op's schema refuses it).
  return Object.fromEntries(attrs);
}

/** `func @name(params) -> (results) {`: the name and the two lists, or an IRError. */
function parseHeader(line: string): { name: string; params: string; results: string } {
  const bad = (): never => fail(1, `expected 'func @name(...) -> (...) {', got: ${quote(line)}`);
  if (!line.startsWith("func @")) bad();
  const nameEnd = line.indexOf("(");
  const name = line.slice(6, nameEnd);
  if (nameEnd < 0 || !/^[\w.-]+$/.test(name)) bad();
  const pClose = closing(line, nameEnd);
  if (pClose < 0 || !line.startsWith(" -> (", pClose + 1)) bad();
  const rOpen = pClose + 5;
  const rClose = closing(line, rOpen);
  if (rClose < 0 || line.slice(rClose + 1) !== " {") bad();
  return { name, params: line.slice(nameEnd + 1, pClose), results: line.slice(rOpen + 1, rClose) };
}

/** Parses IR text (the form `printGraph` writes). Malformed text is an IRError naming the line. */
export function parseGraph(text: string): Graph {
  if (typeof text !== "string")
    throw new IRError(`parseGraph: text must be a string, got ${text === null ? "null" : typeof text}`);
  let lineNo = 1;
  try {
    return parseLines(text, (n) => (lineNo = n));
  } catch (e) {
    if (e instanceof BatchwiseError) throw e;
    // Anything else is a parser bug or an engine limit; it still names the line.
    throw new IRError(`line ${lineNo}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function parseLines(text: string, at: (line: number) => void): Graph {
  const all = text.split("\n");
  // Blank lines are skipped, but errors give the line number in the text.
  const lines: { text: string; no: number }[] = [];
  all.forEach((l, i) => {
    const t = l.trim();
    if (t.length > 0) lines.push({ text: t, no: i + 1 });
  });
  const first = lines[0];
  if (first === undefined) fail(1, "empty text, expected 'func @name(...) -> (...) {'");
  at(first.no);
  const head = parseHeader(first.text);
  const values = new Map<string, Node>();
  const inputs: Node[] = [];
  const inputNames: string[] = [];
  for (const [index, p] of splitTop(head.params).entries()) {
    const colon = p.indexOf(": ");
    const pname = p.slice(1, colon);
    if (!p.startsWith("%") || colon < 0 || !/^[\w.-]+$/.test(pname)) fail(first.no, `bad parameter: ${quote(p)}`);
    if (values.has(pname)) fail(first.no, `parameter %${pname} is declared twice`);
    const n = Node.make("input", [], { index }, parseType(p.slice(colon + 2), first.no));
    values.set(pname, n);
    inputs.push(n);
    inputNames.push(pname);
  }
  const declaredResults = splitTop(head.results).map((t) => parseType(t, first.no));
  if (declaredResults.length === 0) fail(first.no, "a function returns at least one value");
  for (let i = 1; i < lines.length; i++) {
    const { text: line, no } = lines[i]!;
    at(no);
    if (line === "}") fail(no, "'}' before 'return'");
    if (line.startsWith("return ")) {
      const outputs = splitTop(line.slice(7)).map((name) => {
        const n = name.startsWith("%") ? values.get(name.slice(1)) : undefined;
        if (!n) fail(no, `unknown value ${quote(name)}`);
        return n;
      });
      if (outputs.length !== declaredResults.length)
        fail(no, `returns ${outputs.length} values, header says ${declaredResults.length}`);
      outputs.forEach((n, k) => {
        if (fmtType(n.type) !== fmtType(declaredResults[k]!))
          fail(no, `result ${k} is ${fmtType(n.type)} but the header says ${fmtType(declaredResults[k]!)}`);
      });
      const close = lines[i + 1];
      if (close === undefined || close.text !== "}") fail(close?.no ?? no + 1, "expected '}'");
      if (i + 2 < lines.length) fail(lines[i + 2]!.no, "text after the closing brace");
      return makeGraph(head.name, inputs, outputs, inputNames);
    }
    // `%name = op operands {attrs} : type`; the type follows the last " : " (no type contains one).
    const m = /^%(\w+) = (\w+)/.exec(line);
    const typeAt = line.lastIndexOf(" : ");
    if (!m || typeAt < m[0].length) fail(no, `cannot parse: ${quote(line)}`);
    const [head0, name, op] = m;
    if (values.has(name!)) fail(no, `%${name} is defined twice`);
    if (!isOp(op!)) fail(no, `unknown op ${quote(op!)}`);
    let body = line.slice(head0.length, typeAt).trim();
    let attrs: Attrs = {};
    const brace = body.indexOf("{");
    if (brace >= 0) {
      if (!body.endsWith("}")) fail(no, `attributes must come last: ${quote(body)}`);
      attrs = parseAttrs(body.slice(brace), no);
      body = body.slice(0, brace).trim();
    }
    const operands =
      body === ""
        ? []
        : splitTop(body).map((o) => {
            const n = o.startsWith("%") ? values.get(o.slice(1)) : undefined;
            if (!n) fail(no, `unknown value ${quote(o)}`);
            return n;
          });
    const type = parseType(line.slice(typeAt + 3), no);
    try {
      values.set(name!, Node.make(op, operands, attrs, type));
    } catch (e) {
      if (!(e instanceof BatchwiseError)) throw e;
      fail(no, e.message);
    }
  }
  fail(lines[lines.length - 1]!.no, "missing 'return' and '}'");
}
