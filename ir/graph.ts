/**
 * Graph IR: one immutable, hash-consed node kind `{ op, inputs, attrs, type }`
 * (docs/ARCHITECTURE.md, The graph IR). Building a node runs its op's type rule, so every node in
 * existence is well typed; equal structure gives the same node object, so CSE
 * is free.
 */
import { IRError } from "./errors.js";
import type { KReduceOp } from "./kernel.js";
import { attrProblem, OPS, REDUCE_OPS, type Attrs, type AttrsOf, type AttrValue, type Op } from "./ops.js";
import { fmtType, type TensorType } from "./types.js";

let nextId = 0;
/**
 * The hash-consing table: structural key → node, the most recently made or found
 * `INTERN_CAPACITY` nodes, least recently used evicted first. Strong references on
 * purpose: a `WeakRef` keeps its target alive until the current task ends, so a
 * synchronous loop that makes new nodes (`x.mul(i).dataSync()` with a new `i` per
 * iteration) grew the heap without bound until it yielded. Bounded, the table holds
 * at most this many nodes (a few MB) whatever the caller does. Eviction only loses
 * sharing, never correctness: an evicted node that is still in use stays valid, and a
 * structurally equal node made later is a distinct object. The `cse` pass
 * (passes/rewrite.ts) unifies by key within a graph, so sharing inside a compiled
 * graph does not depend on this table's size.
 */
export const INTERN_CAPACITY = 1 << 13;
const interned = new Map<string, Node>();

/** The arguments of `Node.make` after the inputs: the attributes (see `AttrsArg`), then an optional declared type. */
type MakeArgs<K extends Op> = [...AttrsArg<K>, type?: TensorType];

/**
 * The attributes argument of an op-recording call for op `K`: `AttrsOf<K>`,
 * optional when the op has none. When the op is not known statically (`K` is
 * all of `Op`, as when a pass rebuilds a node with its own attributes) it is
 * the untyped `Attrs`, checked at run time by `attrProblem`.
 */
export type AttrsArg<K extends Op> = Op extends K
  ? [attrs?: Attrs]
  : string extends keyof AttrsOf<K>
    ? [attrs?: AttrsOf<K>]
    : [attrs: AttrsOf<K>];

/**
 * A node known to be of op `K`: its `attrs` typed by the op table
 * (`AttrsOf<K>`). `Node.make` returns one; `hasOp` and `attrsOf` narrow a
 * plain `Node` (any op, untyped attributes) to it.
 */
export type NodeOf<K extends Op> = Node & { readonly op: K; readonly attrs: AttrsOf<K> };

export class Node {
  private constructor(
    readonly id: number,
    readonly op: Op,
    readonly inputs: readonly Node[],
    readonly attrs: Attrs,
    readonly type: TensorType,
    /** Structural key: op, input ids, sorted attrs and type. */
    readonly key: string,
  ) {}

  /** Builds (or finds) the node; `type` is required for `input` and checked for every other op. */
  static make<K extends Op>(op: K, inputs: readonly Node[], ...rest: MakeArgs<K>): NodeOf<K>;
  static make(op: Op, inputs: readonly Node[], attrs: Attrs = {}, type?: TensorType): Node {
    const info = OPS[op];
    if (info.arity < 0 ? inputs.length === 0 : inputs.length !== info.arity) {
      throw new IRError(`${op}: expects ${info.arity < 0 ? "one or more" : info.arity} inputs, got ${inputs.length}`);
    }
    // A plain check of the attribute keys and value kinds (no schema library on this hot path).
    const bad = attrProblem(op, attrs);
    if (bad !== undefined) throw new IRError(`${op}: bad attributes ${fmtAttrs(attrs)}: ${bad}`);
    let t: TensorType;
    if (op === "input") {
      if (type === undefined) throw new IRError("input: needs an explicit type");
      t = type;
    } else {
      t = info.type(
        op,
        inputs.map((i) => i.type),
        attrs,
      );
      if (type !== undefined && fmtType(type) !== fmtType(t)) {
        throw new IRError(`${op}: declared type ${fmtType(type)} but the op gives ${fmtType(t)}`);
      }
    }
    const key = `${op}(${inputs.map((i) => i.id).join(",")})${fmtAttrs(attrs)}:${fmtType(t)}`;
    const found = interned.get(key);
    if (found !== undefined) {
      // Most recently used goes last (Map keeps insertion order).
      interned.delete(key);
      interned.set(key, found);
      return found;
    }
    const node = new Node(nextId++, op, inputs, attrs, t, key);
    interned.set(key, node);
    if (interned.size > INTERN_CAPACITY) interned.delete(interned.keys().next().value!);
    return node;
  }
}

/** Whether `n` is a node of one of `ops`; narrows `n.attrs` to their attributes. */
export function hasOp<K extends Op>(n: Node, ...ops: readonly K[]): n is NodeOf<K> {
  return ops.length === 1 ? n.op === ops[0] : (ops as readonly Op[]).includes(n.op);
}

/** The attributes of `n`, typed by its op; throws an IRError when `n` is not a node of one of `ops`. */
export function attrsOf<K extends Op>(n: Node, ...ops: readonly K[]): AttrsOf<K> {
  if (!hasOp(n, ...ops)) throw new IRError(`expected a ${ops.join(" or ")} node, got ${n.op}`);
  return n.attrs;
}

/** Whether `n` is a reduction (`sum`, `max`, `argmin`, …); narrows `n.attrs` to the reduction attributes. */
export function isReduceNode(n: Node): n is NodeOf<KReduceOp> {
  return (REDUCE_OPS as ReadonlySet<Op>).has(n.op);
}

/** A function in the IR: named inputs, outputs, and the nodes between them. */
export interface Graph {
  readonly name: string;
  readonly inputs: readonly Node[];
  readonly inputNames: readonly string[];
  readonly outputs: readonly Node[];
}

export function makeGraph(
  name: string,
  inputs: readonly Node[],
  outputs: readonly Node[],
  inputNames?: readonly string[],
): Graph {
  return { name, inputs, outputs, inputNames: inputNames ?? inputs.map((_, i) => `arg${i}`) };
}

/**
 * What `roots` reach through `operands`, each after its operands (a deterministic,
 * iterative DFS: operands in order), leaving out what `seen` holds (it gains every value
 * ordered). `reach` sees each operand as the walk first gets to it.
 */
export function postOrder<V>(
  roots: readonly V[],
  operands: (v: V) => readonly V[],
  seen: Set<V> = new Set(),
  reach?: (v: V) => void,
): V[] {
  const order: V[] = [];
  const stack: { v: V; operands: readonly V[]; next: number }[] = [];
  for (const root of roots) {
    if (seen.has(root)) continue;
    seen.add(root);
    stack.push({ v: root, operands: operands(root), next: 0 });
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.next < top.operands.length) {
        const child = top.operands[top.next++]!;
        if (!seen.has(child)) {
          reach?.(child);
          seen.add(child);
          stack.push({ v: child, operands: operands(child), next: 0 });
        }
      } else {
        order.push(top.v);
        stack.pop();
      }
    }
  }
  return order;
}

/** Nodes reachable from the outputs, inputs first, each after its operands (deterministic DFS). */
export function topoOrder(g: Graph): Node[] {
  const reached = postOrder(
    g.outputs,
    (n) => n.inputs,
    new Set(g.inputs),
    (n) => {
      if (n.op === "input") throw new IRError(`graph ${g.name}: uses an input that is not in its input list`);
    },
  );
  return [...g.inputs, ...reached];
}

/** Number of uses of each node among the reachable nodes and the outputs. */
export function useCounts(order: readonly Node[], outputs: readonly Node[]): Map<Node, number> {
  const uses = new Map<Node, number>();
  for (const n of order) for (const i of n.inputs) uses.set(i, (uses.get(i) ?? 0) + 1);
  for (const o of outputs) uses.set(o, (uses.get(o) ?? 0) + 1);
  return uses;
}

/** Formats a number so that it parses back to the same value (including -0, NaN, ±Infinity). */
export function fmtNumber(v: number): string {
  if (Object.is(v, -0)) return "-0";
  return String(v);
}

function fmtValue(v: AttrValue): string {
  if (typeof v === "number") return fmtNumber(v);
  if (typeof v === "boolean") return String(v);
  if (typeof v === "string") return /^[A-Za-z_][\w]*$/.test(v) ? v : JSON.stringify(v);
  return `[${v.map(fmtNumber).join(",")}]`;
}

/** `{a=1, b=[0,1]}` with keys sorted; empty string when there are none. */
export function fmtAttrs(attrs: Attrs): string {
  const keys = Object.keys(attrs).sort();
  if (keys.length === 0) return "";
  return `{${keys.map((k) => `${k}=${fmtValue(attrs[k]!)}`).join(", ")}}`;
}
