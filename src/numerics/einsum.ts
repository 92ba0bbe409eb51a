/**
 * `einsum` on base dims, lowered to a broadcast product and a sum: every operand is
 * laid out over one common list of labels (missing labels as size-1 dims), the
 * operands are multiplied with broadcasting, the contracted labels are summed, and the
 * result is permuted to the output order. Mul and sum fuse into one kernel (an inlined
 * reduction for small contractions), so `einsum("ij,jk->ik", a, b)` costs what the
 * hand-written broadcast-multiply-sum costs. Batch dims are not labelled: they
 * broadcast as in every other op.
 */
import { promote } from "../../ir/dtype.js";
import { DTypeError, ShapeError } from "../../ir/errors.js";
import { describe } from "../check.js";
import { Tensor } from "../tensor.js";
import { checkTensor } from "./common.js";

const ELL = "…"; // the ellipsis as one internal label per broadcast dim: "…0", "…1", …

interface Parsed {
  readonly inputs: readonly string[][];
  readonly output: readonly string[];
}

function bad(spec: string, why: string): never {
  throw new ShapeError(`einsum: subscripts ${JSON.stringify(spec)}: ${why}`);
}

/** Splits one operand's subscripts into labels, "..." kept as one token. */
function tokens(spec: string, part: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < part.length; i++) {
    const c = part[i]!;
    if (c === ".") {
      if (part.slice(i, i + 3) !== "...") bad(spec, `"." must be part of "..."`);
      if (out.includes("...")) bad(spec, `"..." appears twice in ${JSON.stringify(part)}`);
      out.push("...");
      i += 2;
    } else if (/^[A-Za-z]$/.test(c)) out.push(c);
    else if (c !== " ") bad(spec, `invalid character ${JSON.stringify(c)} (labels are letters a-z, A-Z)`);
  }
  return out;
}

function parse(spec: string, operands: readonly Tensor[]): Parsed {
  const arrow = spec.indexOf("->");
  if (arrow >= 0 && spec.indexOf("->", arrow + 1) >= 0) bad(spec, `"->" appears twice`);
  const lhs = arrow >= 0 ? spec.slice(0, arrow) : spec;
  const parts = lhs.split(",");
  if (parts.length !== operands.length) {
    bad(spec, `names ${parts.length} operand(s) but ${operands.length} tensor(s) were given`);
  }
  const raw = parts.map((p) => tokens(spec, p));
  // Expand "..." into the operand's unlabelled leading dims, aligned from the right.
  let ellRank = 0;
  const inputs = raw.map((labels, i) => {
    const rank = operands[i]!.baseDim;
    const named = labels.filter((l) => l !== "...").length;
    const hasEll = labels.includes("...");
    if (hasEll ? named > rank : named !== rank) {
      bad(
        spec,
        `operand ${i} has ${named} label(s)${hasEll ? ' and "..."' : ""} but x${i} ${operands[i]!.toString()} has ${rank} base dim(s)`,
      );
    }
    const k = rank - named;
    ellRank = Math.max(ellRank, hasEll ? k : 0);
    return labels.flatMap((l) => (l === "..." ? Array.from({ length: k }, (_, j) => `${ELL}${j - k}`) : [l]));
  });
  const ell = Array.from({ length: ellRank }, (_, j) => `${ELL}${j - ellRank}`);
  let output: string[];
  if (arrow >= 0) {
    const outTokens = tokens(spec, spec.slice(arrow + 2));
    const seen = new Set<string>();
    output = [];
    for (const l of outTokens) {
      if (seen.has(l)) bad(spec, `output label ${JSON.stringify(l)} appears twice`);
      seen.add(l);
      if (l === "...") output.push(...ell);
      else if (!inputs.some((ls) => ls.includes(l))) bad(spec, `output label ${JSON.stringify(l)} is not in any input`);
      else output.push(l);
    }
    if (ellRank > 0 && !outTokens.includes("...")) {
      // As NumPy: when the output leaves out "...", the broadcast dims are summed.
      output = output.filter((l) => !l.startsWith(ELL));
    }
  } else {
    // Implicit output (NumPy): the broadcast dims, then the labels used exactly once, in alphabetical order.
    const count = new Map<string, number>();
    for (const ls of inputs) for (const l of ls) if (!l.startsWith(ELL)) count.set(l, (count.get(l) ?? 0) + 1);
    const once = [...count.entries()].filter(([, c]) => c === 1).map(([l]) => l);
    once.sort();
    output = [...ell, ...once];
  }
  return { inputs, output };
}

/** The operand with repeated labels reduced to their diagonal (`"ii"` -> `"i"`): returns the tensor and its labels. */
function diagonalize(spec: string, x: Tensor, labels: string[], i: number): { t: Tensor; labels: string[] } {
  let t = x;
  let ls = [...labels];
  for (;;) {
    const dup = ls.findIndex((l, p) => ls.indexOf(l) !== p);
    if (dup < 0) return { t, labels: ls };
    const first = ls.indexOf(ls[dup]!);
    const n = t.baseShape[first]!;
    if (t.baseShape[dup] !== n) {
      bad(
        spec,
        `label ${JSON.stringify(ls[dup])} is used for sizes ${n} and ${t.baseShape[dup]} of x${i} ${x.toString()}`,
      );
    }
    // Move the pair to the end, flatten it to n·n, and take every (n+1)-th element: the diagonal.
    const rest = [...ls.keys()].filter((p) => p !== first && p !== dup);
    t = t.permute(...rest, first, dup);
    t = t.reshape([...t.baseShape.slice(0, rest.length), n * n]);
    t = n === 0 ? t : t.slice(-1, 0, (n - 1) * (n + 1) + 1, n + 1);
    ls = [...rest.map((p) => ls[p]!), ls[first]!];
  }
}

/**
 * Einstein summation over base dims, with NumPy's subscripts: `"ij,jk->ik"` (matrix
 * product), `"ii->i"` (diagonal), `"ii"` (trace), `"i,i"` (dot), `"ij->ji"`, `"...ij,...jk->...ik"`
 * (`...` stands for leading base dims that broadcast as in NumPy). Without `->` the output
 * is the broadcast dims and then the labels used once, alphabetically. Batch dims are not
 * named: they broadcast like every op. Labels are letters; a label must have one size
 * (size-1 dims of `...` broadcast). Dtypes promote; bool computes in int32.
 * Lowered to one broadcast product and a sum over the contracted labels (it fuses; there
 * is no contraction-order search, so the product spans every label at once).
 * @example einsum("ij,jk->ik", a, b) // a.matmul(b)
 */
export function einsum(subscripts: string, ...operands: Tensor[]): Tensor {
  if (typeof subscripts !== "string") {
    throw new DTypeError(`einsum: subscripts must be a string, got ${describe(subscripts)}`);
  }
  if (operands.length === 0) throw new ShapeError(`einsum: needs at least one operand`);
  operands.forEach((t, i) => checkTensor("einsum", t, `operand ${i}`));
  const { inputs, output } = parse(subscripts, operands);
  let dtype = operands.map((t) => t.dtype).reduce(promote);
  if (dtype === "bool") dtype = "int32";
  const ops = operands.map((t, i) => diagonalize(subscripts, t.cast(dtype), inputs[i]!, i));
  // Every label with its size (size-1 dims of "..." broadcast; named labels must agree).
  const size = new Map<string, number>();
  ops.forEach(({ t, labels }, i) =>
    labels.forEach((l, p) => {
      const d = t.baseShape[p]!;
      const have = size.get(l);
      if (have === undefined) size.set(l, d);
      else if (d !== have && l.startsWith(ELL) && (d === 1 || have === 1)) size.set(l, Math.max(d, have));
      else if (d !== have) {
        bad(
          subscripts,
          `${l.startsWith(ELL) ? "a broadcast dim of ..." : `label ${JSON.stringify(l)}`} is ${have} in one operand but ${d} in x${i} ${operands[i]!.toString()}`,
        );
      }
    }),
  );
  // The common layout: output labels first, then the contracted ones.
  const contracted = [...size.keys()].filter((l) => !output.includes(l));
  const all = [...output, ...contracted];
  let prodT: Tensor | undefined;
  for (const { t, labels } of ops) {
    // Permute this operand's labels into the common order, then insert size-1 dims for the others.
    const order = all.filter((l) => labels.includes(l));
    const perm = order.map((l) => labels.indexOf(l));
    const moved = perm.length > 1 && perm.some((p, q) => p !== q) ? t.permute(...perm) : t;
    const full = moved.reshape(all.map((l) => (labels.includes(l) ? t.baseShape[labels.indexOf(l)]! : 1)));
    prodT = prodT === undefined ? full : prodT.mul(full);
  }
  let out = prodT!;
  if (contracted.length > 0) {
    out = out.sum([...contracted.keys()].map((k) => output.length + k));
  }
  // Labels that only broadcast (size 1 everywhere) still need their full output size.
  const shape = output.map((l) => size.get(l)!);
  return out.baseShape.every((d, p) => d === shape[p]) ? out : out.expand(shape);
}
