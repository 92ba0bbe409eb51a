/** Parses the IR text form of ir/print.ts back into a graph (the types are re-inferred and checked). */
import { DTYPE_FROM_SHORT } from "./dtype.js";
import { IRError } from "./errors.js";
import { makeGraph, Node, type Graph } from "./graph.js";
import { isOp, type Attrs, type AttrValue } from "./ops.js";
import type { Dim, TensorType } from "./types.js";

/** Splits on commas that are not inside brackets, braces or quotes. */
function splitTop(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "[" || c === "{" || c === "(") depth++;
    else if (c === "]" || c === "}" || c === ")") depth--;
    else if (c === "," && depth === 0) {
      parts.push(s.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = s.slice(start).trim();
  if (last.length > 0 || parts.length > 0) parts.push(last);
  return parts;
}

function parseNumber(s: string, line: number): number {
  const v = s === "NaN" ? NaN : s === "Infinity" ? Infinity : s === "-Infinity" ? -Infinity : Number(s);
  if (Number.isNaN(v) && s !== "NaN") throw new IRError(`line ${line}: not a number: ${s}`);
  return v;
}

export function parseType(s: string, line = 0): TensorType {
  const m = /^(\w+)\[(.*);(.*)\]$/.exec(s.trim());
  const dtype = m ? DTYPE_FROM_SHORT[m[1]!] : undefined;
  if (!m || dtype === undefined) throw new IRError(`line ${line}: not a type: ${s}`);
  const dims = (t: string): string[] => (t.trim() === "" ? [] : t.split(",").map((d) => d.trim()));
  const batch: Dim[] = dims(m[2]!).map((d) => (/^\d+$/.test(d) ? Number(d) : d));
  const base = dims(m[3]!).map((d) => {
    if (!/^\d+$/.test(d)) throw new IRError(`line ${line}: base dims are numbers, got ${d}`);
    return Number(d);
  });
  return { dtype, batch, base };
}

function parseAttrValue(s: string, line: number): AttrValue {
  if (s === "true" || s === "false") return s === "true";
  if (s.startsWith("[")) {
    const inner = s.slice(1, -1).trim();
    return inner === "" ? [] : inner.split(",").map((x) => parseNumber(x.trim(), line));
  }
  if (s.startsWith('"')) return JSON.parse(s) as string;
  if (/^-?(\d|NaN|Infinity)/.test(s) || s === "NaN") return parseNumber(s, line);
  return s;
}

function parseAttrs(s: string, line: number): Attrs {
  const attrs: Record<string, AttrValue> = {};
  for (const part of splitTop(s.slice(1, -1))) {
    const eq = part.indexOf("=");
    if (eq < 0) throw new IRError(`line ${line}: bad attribute ${part}`);
    attrs[part.slice(0, eq).trim()] = parseAttrValue(part.slice(eq + 1).trim(), line);
  }
  return attrs;
}

export function parseGraph(text: string): Graph {
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l.length > 0);
  const head = /^func @([\w.-]+)\((.*)\) -> \((.*)\) \{$/.exec(lines[0] ?? "");
  if (!head) throw new IRError(`line 1: expected 'func @name(...) -> (...) {', got: ${lines[0] ?? ""}`);
  const values = new Map<string, Node>();
  const inputs: Node[] = [];
  const inputNames: string[] = [];
  for (const [index, p] of splitTop(head[2]!).entries()) {
    const m = /^%([\w.-]+): (.+)$/.exec(p);
    if (!m) throw new IRError(`line 1: bad parameter: ${p}`);
    const n = Node.make("input", [], { index }, parseType(m[2]!, 1));
    values.set(m[1]!, n);
    inputs.push(n);
    inputNames.push(m[1]!);
  }
  const declaredResults = splitTop(head[3]!).map((t) => parseType(t, 1));
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const lineNo = i + 1;
    if (line === "}") {
      if (i !== lines.length - 1) throw new IRError(`line ${lineNo}: text after the closing brace`);
      break;
    }
    const ret = /^return (.*)$/.exec(line);
    if (ret) {
      const outputs = splitTop(ret[1]!).map((name) => {
        const n = values.get(name.replace(/^%/, ""));
        if (!n) throw new IRError(`line ${lineNo}: unknown value ${name}`);
        return n;
      });
      if (outputs.length !== declaredResults.length) throw new IRError(`line ${lineNo}: returns ${outputs.length} values, header says ${declaredResults.length}`);
      if (lines[i + 1] !== "}") throw new IRError(`line ${lineNo + 1}: expected '}'`);
      return makeGraph(head[1]!, inputs, outputs, inputNames);
    }
    const m = /^%(\w+) = (\w+)(.*) : (\S.*)$/.exec(line);
    if (!m) throw new IRError(`line ${lineNo}: cannot parse: ${line}`);
    const [, name, op, rest, typeText] = m;
    if (!isOp(op!)) throw new IRError(`line ${lineNo}: unknown op ${op}`);
    let body = rest!.trim();
    let attrs: Attrs = {};
    const brace = body.indexOf("{");
    if (brace >= 0) {
      attrs = parseAttrs(body.slice(brace), lineNo);
      body = body.slice(0, brace).trim();
    }
    const operands = body === "" ? [] : splitTop(body).map((o) => {
      const n = values.get(o.replace(/^%/, ""));
      if (!n) throw new IRError(`line ${lineNo}: unknown value ${o}`);
      return n;
    });
    try {
      values.set(name!, Node.make(op, operands, attrs, parseType(typeText!, lineNo)));
    } catch (e) {
      throw new IRError(`line ${lineNo}: ${(e as Error).message}`);
    }
  }
  throw new IRError("missing 'return' and '}'");
}
