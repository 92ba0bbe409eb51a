/**
 * The derivative API on tensors: shapes (per-sample Jacobians), closed forms
 * written out by hand, JAX's rules at non-differentiable points, and the
 * composition with jit, trace, bundles, jagged tensors and TensorDicts.
 */
import { describe, expect, it } from "vitest";
import {
  R2,
  SR2,
  SSR4,
  Scalar,
  Tensor,
  TensorDict,
  Vec,
  counters,
  counterSnapshot,
  fromTypedArray,
  grad,
  hessian,
  jacfwd,
  jacobian,
  jacrev,
  jagged,
  JaggedTensor,
  jit,
  jvp,
  loadBundle,
  spec,
  tensor,
  trace,
  valueAndGrad,
  vjp,
  where,
  DTypeError,
  ShapeError,
  UnsupportedOpError,
} from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";

const f64 = { dtype: "float64" } as const;

function rand(n: number, seed: number): number[] {
  let s = seed;
  return Array.from({ length: n }, () => ((s = (s * 16807) % 2147483647) / 2147483647) * 2 - 1);
}

function close(actual: ArrayLike<number>, expected: ArrayLike<number>, tol = 1e-10): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    if (!(Math.abs(a - e) <= tol * Math.max(1, Math.abs(e)))) throw new Error(`element ${i}: ${a} vs expected ${e}`);
  }
}

const flat = (x: { dataSync(): ArrayLike<number> }): number[] => Array.from(x.dataSync(), Number);

/** 3×3 helpers on row-major arrays (the hand-written reference). */
function det3(a: readonly number[]): number {
  return (
    a[0]! * (a[4]! * a[8]! - a[5]! * a[7]!) -
    a[1]! * (a[3]! * a[8]! - a[5]! * a[6]!) +
    a[2]! * (a[3]! * a[7]! - a[4]! * a[6]!)
  );
}
function inv3(a: readonly number[]): number[] {
  const d = det3(a);
  const c = [
    a[4]! * a[8]! - a[5]! * a[7]!,
    a[2]! * a[7]! - a[1]! * a[8]!,
    a[1]! * a[5]! - a[2]! * a[4]!,
    a[5]! * a[6]! - a[3]! * a[8]!,
    a[0]! * a[8]! - a[2]! * a[6]!,
    a[2]! * a[3]! - a[0]! * a[5]!,
    a[3]! * a[7]! - a[4]! * a[6]!,
    a[1]! * a[6]! - a[0]! * a[7]!,
    a[0]! * a[4]! - a[1]! * a[3]!,
  ];
  return c.map((x) => x / d);
}
function mm3(a: readonly number[], b: readonly number[]): number[] {
  const r: number[] = [];
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) r.push(a[i * 3]! * b[j]! + a[i * 3 + 1]! * b[3 + j]! + a[i * 3 + 2]! * b[6 + j]!);
  return r;
}

describe("shapes: per-sample derivatives", () => {
  const x = tensor(
    [
      [1, 2, 3],
      [4, 5, 6],
    ],
    { batchDim: 1, ...f64 },
  );

  it("grad of a (;) loss is shaped like its argument, batch dims included", () => {
    const g = grad((x: Tensor) => x.mul(x).sum().batchSum())(x);
    expect(g.shape).toEqual([2, 3]);
    expect(g.batchDim).toBe(1);
    close(flat(g), [2, 4, 6, 8, 10, 12]);
  });

  it("jacobian of (B; n) -> (B; m) is (B; m, n), forward and reverse agree with the closed form", () => {
    // y_i = x_i² · Σ_k x_k (per sample): dy_i/dx_j = 2 x_i S δ_ij + x_i².
    const f = (x: Tensor) =>
      x
        .mul(x)
        .mul(x.sum(0, { keepdim: true }))
        .slice(0, 0, 2);
    const want: number[] = [];
    for (const row of [
      [1, 2, 3],
      [4, 5, 6],
    ]) {
      const S = row[0]! + row[1]! + row[2]!;
      for (let i = 0; i < 2; i++) for (let j = 0; j < 3; j++) want.push((i === j ? 2 * row[i]! * S : 0) + row[i]! ** 2);
    }
    for (const J of [jacobian(f)(x), jacfwd(f)(x), jacrev(f)(x)] as Tensor[]) {
      expect(J.batchShape).toEqual([2]);
      expect(J.baseShape).toEqual([2, 3]);
      close(flat(J), want);
    }
  });

  it("valueAndGrad, argnums arrays, vjp and jvp", () => {
    const y = tensor([0.5, -1, 2], f64);
    const f = (a: Tensor, b: Tensor) => a.mul(b).sin().sum();
    const [v, [ga, gb]] = valueAndGrad(f, { argnums: [0, 1] })(x.batchIndex(0, 0), y);
    const a = [1, 2, 3];
    const b = [0.5, -1, 2];
    close([v.itemSync()], [a.reduce((s, ai, i) => s + Math.sin(ai * b[i]!), 0)]);
    close(
      flat(ga),
      a.map((ai, i) => Math.cos(ai * b[i]!) * b[i]!),
    );
    close(
      flat(gb),
      a.map((ai, i) => Math.cos(ai * b[i]!) * ai),
    );
    const [out, back] = vjp((t: Tensor) => t.exp(), y);
    close(flat(out), b.map(Math.exp));
    const [ct] = back(tensor([1, 2, 3], f64)) as Tensor[];
    close(
      flat(ct!),
      b.map((bi, i) => (i + 1) * Math.exp(bi)),
    );
    const [o2, t2] = jvp((t: Tensor) => t.mul(t), [y], [tensor([1, 1, -1], f64)]);
    close(flat(o2), [0.25, 1, 4]);
    close(flat(t2), [1, -2, -4]);
  });

  it("hessian: second derivatives against closed forms", () => {
    // f = Σ x³: H = diag(6x). f = ½ xᵀ A x: H = (A + Aᵀ)/2, per sample.
    const H1 = hessian((x: Tensor) => x.mul(x).mul(x).sum(0))(x) as Tensor;
    expect(H1.shape).toEqual([2, 3, 3]);
    close(flat(H1), [6, 0, 0, 0, 12, 0, 0, 0, 18, 24, 0, 0, 0, 30, 0, 0, 0, 36]);
    const A = [1, 2, 0, -1, 3, 4, 2, 0, 5];
    const At = tensor(
      [
        [1, 2, 0],
        [-1, 3, 4],
        [2, 0, 5],
      ],
      f64,
    );
    const H2 = hessian((x: Tensor) => x.matmul(At).mul(x).sum(0).mul(0.5))(x) as Tensor;
    const sym = A.map((v, k) => (v + A[(k % 3) * 3 + Math.floor(k / 3)]!) / 2);
    close(flat(H2), [...sym, ...sym]);
    // f = x0² x1 + sin(x2): H = [[2x1, 2x0, 0], [2x0, 0, 0], [0, 0, -sin x2]].
    const H3 = hessian((x: Tensor) => x.select(0, 0).mul(x.select(0, 0)).mul(x.select(0, 1)).add(x.select(0, 2).sin()))(
      x,
    ) as Tensor;
    const h = (r: number[]) => [2 * r[1]!, 2 * r[0]!, 0, 2 * r[0]!, 0, 0, 0, 0, -Math.sin(r[2]!)];
    close(flat(H3), [...h([1, 2, 3]), ...h([4, 5, 6])]);
  });
});

describe("closed forms with typed tensors", () => {
  const n = 4;
  const a = rand(9 * n, 7).map((v, k) => v + (k % 4 === 0 ? 2 : 0));
  const A = new R2(fromTypedArray(Float64Array.from(a), [n, 3, 3], { batchDim: 1 }));

  it("jacobian with several argnums: one typed block per argument", () => {
    const B = new R2(fromTypedArray(Float64Array.from(rand(9 * n, 17)), [n, 3, 3], { batchDim: 1 }));
    // d(A:B)/dA = B, d(A:B)/dB = A (Scalar by R2 is an R2)
    const [dA, dB] = jacobian((a: R2, b: R2) => a.inner(b), { argnums: [0, 1] })(A, B) as R2[];
    expect(dA).toBeInstanceOf(R2);
    close(flat(dA!), flat(B));
    close(flat(dB!), a);
  });

  it("d det A = det A · A⁻ᵀ (an R2, per sample)", () => {
    const g = grad((m: R2) => m.det())(A);
    expect(g).toBeInstanceOf(R2);
    const want: number[] = [];
    for (let b = 0; b < n; b++) {
      const m = a.slice(b * 9, b * 9 + 9);
      const d = det3(m);
      const iv = inv3(m);
      for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) want.push(d * iv[j * 3 + i]!);
    }
    close(flat(g), want, 1e-9);
  });

  it("d A⁻¹ = −A⁻¹ dA A⁻¹", () => {
    const dA = rand(9 * n, 11);
    const dAt = new R2(fromTypedArray(Float64Array.from(dA), [n, 3, 3], { batchDim: 1 }));
    const [, t] = jvp((m: R2) => m.inverse(), [A], [dAt]);
    const want: number[] = [];
    for (let b = 0; b < n; b++) {
      const iv = inv3(a.slice(b * 9, b * 9 + 9));
      want.push(...mm3(mm3(iv, dA.slice(b * 9, b * 9 + 9)), iv).map((v) => -v));
    }
    close(flat(t as R2), want, 1e-9);
  });

  it("d|v| = v/|v| (Vec norm) and d|s|²/ds = 2s for a Mandel SR2", () => {
    const v = rand(3 * n, 3);
    const V = new Vec(fromTypedArray(Float64Array.from(v), [n, 3], { batchDim: 1 }));
    const g = grad((x: Vec) => x.norm())(V);
    expect(g).toBeInstanceOf(Vec);
    const want: number[] = [];
    for (let b = 0; b < n; b++) {
      const r = v.slice(b * 3, b * 3 + 3);
      const nn = Math.hypot(...r);
      want.push(...r.map((x) => x / nn));
    }
    close(flat(g), want);
    const s = rand(6 * n, 5);
    const S = new SR2(fromTypedArray(Float64Array.from(s), [n, 6], { batchDim: 1 }));
    close(
      flat(grad((x: SR2) => x.normSq())(S)),
      s.map((x) => 2 * x),
    );
  });

  it("hessian of a Scalar function of an SR2 is an SSR4: d²|s|²/ds² = 2·I, d²(tr s)²/ds² = 2·1⊗1", () => {
    const S = new SR2(fromTypedArray(Float64Array.from(rand(6 * n, 21)), [n, 6], { batchDim: 1 }));
    const H = hessian((x: SR2) => x.normSq())(S);
    expect(H).toBeInstanceOf(SSR4);
    const eye: number[] = [];
    for (let i = 0; i < 6; i++) for (let j = 0; j < 6; j++) eye.push(i === j ? 2 : 0);
    close(flat(H as SSR4), Array.from({ length: n }, () => eye).flat());
    const H2 = hessian((x: SR2) => x.tr().mul(x.tr()))(S) as SSR4;
    const oo: number[] = [];
    for (let i = 0; i < 6; i++) for (let j = 0; j < 6; j++) oo.push(i < 3 && j < 3 ? 2 : 0);
    close(flat(H2), Array.from({ length: n }, () => oo).flat());
  });

  it("the Jacobian of SSR4·SR2 is the elasticity tensor (an SSR4 in Mandel form)", () => {
    const E = 200;
    const nu = 0.3;
    const C = SSR4.isotropicENu(E, nu, f64);
    const eps = new SR2(fromTypedArray(Float64Array.from(rand(6 * n, 9)), [n, 6], { batchDim: 1 }));
    const J = jacobian((e: SR2) => C.mul(e))(eps);
    expect(J).toBeInstanceOf(SSR4);
    expect((J as SSR4).t.shape).toEqual([n, 6, 6]);
    // Closed form: λ = Eν/((1+ν)(1−2ν)), μ = E/(2(1+ν)); Mandel C = λ 1⊗1 + 2μ I (I the 6×6 identity).
    const lam = (E * nu) / ((1 + nu) * (1 - 2 * nu));
    const mu = E / (2 * (1 + nu));
    const one: number[] = [];
    for (let i = 0; i < 6; i++)
      for (let j = 0; j < 6; j++) one.push((i < 3 && j < 3 ? lam : 0) + (i === j ? 2 * mu : 0));
    close(flat(J as SSR4), Array.from({ length: n }, () => one).flat(), 1e-12);
    // and by forward mode
    close(flat(jacfwd((e: SR2) => C.mul(e))(eps) as SSR4), Array.from({ length: n }, () => one).flat(), 1e-12);
  });

  it("the per-sample Jacobian of a small-base typed formula is one unrolled kernel, traced once", () => {
    const f = jit((x: Tensor) => (jacobian((e: SR2) => e.dev().mul(e.norm()))(new SR2(x)) as SSR4).t);
    const s1 = fromTypedArray(Float64Array.from(rand(6 * 3, 2)), [3, 6], { batchDim: 1 });
    const s2 = fromTypedArray(Float64Array.from(rand(6 * 7, 4)), [7, 6], { batchDim: 1 });
    const before = counterSnapshot();
    const J1 = f(s1);
    const J2 = f(s2);
    expect(J1.shape).toEqual([3, 6, 6]);
    expect(J2.shape).toEqual([7, 6, 6]);
    expect(f.stats.traces).toBe(1);
    expect(counters.traces - before.traces).toBe(1);
    // One kernel compiled, one launch per call.
    expect(counters.compiles - before.compiles).toBe(1);
    expect(counters.dispatches - before.dispatches).toBe(2);
    expect(f.dump({ after: "fuse" })).toMatch(/: 1 kernels/);
    // Compared with the eager (untraced) Jacobian.
    close(flat(J2), flat(jacobian((e: SR2) => e.dev().mul(e.norm()))(new SR2(s2)) as SSR4), 1e-12);
  });
});

describe("JAX's rules at non-differentiable points", () => {
  const g1 = (f: (x: Tensor) => Tensor, xs: number[]) =>
    flat(grad((x: Tensor) => f(x).sum())(tensor(xs, f64))).map((v) => v + 0);

  it("abs'(0) = 0, sqrt'(0) = inf, floor/round/sign have zero derivatives", () => {
    expect(g1((x) => x.abs(), [-2, -0, 0, 3])).toEqual([-1, 0, 0, 1]);
    expect(g1((x) => x.sqrt(), [0, 4])).toEqual([Infinity, 0.25]);
    expect(g1((x) => x.floor().add(x.round()).add(x.sign()), [0.5, -1.5, 0])).toEqual([0, 0, 0]);
  });

  it("maximum/minimum ties split 0.5/0.5; max reductions share among ties", () => {
    const x = tensor([1, 2, 3], f64);
    const y = tensor([1, 5, 0], f64);
    const [gx, gy] = grad((a: Tensor, b: Tensor) => a.maximum(b).sum(), { argnums: [0, 1] })(x, y) as Tensor[];
    expect(flat(gx!)).toEqual([0.5, 0, 1]);
    expect(flat(gy!)).toEqual([0.5, 1, 0]);
    const [hx, hy] = grad((a: Tensor, b: Tensor) => a.minimum(b).sum(), { argnums: [0, 1] })(x, y) as Tensor[];
    expect(flat(hx!)).toEqual([0.5, 1, 0]);
    expect(flat(hy!)).toEqual([0.5, 0, 1]);
    expect(g1((x) => x.max(), [3, 1, 3])).toEqual([0.5, 0, 0.5]);
    // prod: ∂/∂x_i = Π_{j≠i} x_j, exact at zeros
    expect(g1((x) => x.prod(), [0, 2, 3])).toEqual([6, 0, 0]);
    expect(g1((x) => x.prod(), [0, 0, 3])).toEqual([0, 0, 0]);
  });

  it("the double-where pattern leaks no NaN from the branch not taken", () => {
    // JAX's idiom: safe = where(x > 0, x, 1); where(x > 0, log(safe), 0).
    const f = (x: Tensor) => {
      const pos = x.gt(0);
      return where(pos, where(pos, x, 1).log(), 0);
    };
    expect(g1(f, [-1, 0, 2])).toEqual([0, 0, 0.5]);
    // jacobian and forward mode too
    expect(flat(jacfwd(f)(tensor([-1, 2], f64)) as Tensor)).toEqual([0, 0, 0, 0.5]);
  });

  it("integer and bool inputs get zero derivatives", () => {
    const i = tensor([1, 2, 3], { dtype: "int32" });
    const x = tensor([1, 2, 3], f64);
    const [gx, gi] = grad((a: Tensor, b: Tensor) => a.mul(b.cast("float64")).sum(), { argnums: [0, 1] })(
      x,
      i,
    ) as Tensor[];
    expect(flat(gx!)).toEqual([1, 2, 3]);
    expect(flat(gi!)).toEqual([0, 0, 0]);
    expect(gi!.dtype).toBe("int32");
    // through a cast to an integer: zero
    expect(g1((x) => x.cast("int32").cast("float64").mul(x), [1.5, 2.5])).toEqual([1, 2]);
  });
});

describe("composition", () => {
  it("inside jit: one trace for any batch size", () => {
    const f = jit((x: Tensor) => grad((t: Tensor) => t.sin().mul(t).sum())(x));
    const a = f(tensor([[0.5, 1]], { batchDim: 1, ...f64 }));
    const b = f(
      tensor(
        [
          [0.5, 1],
          [2, 3],
          [4, 5],
        ],
        { batchDim: 1, ...f64 },
      ),
    );
    expect(f.stats.traces).toBe(1);
    const d = (v: number) => Math.cos(v) * v + Math.sin(v);
    close(flat(a), [0.5, 1].map(d));
    close(flat(b), [0.5, 1, 2, 3, 4, 5].map(d));
  });

  it("trace(fn, specs) and a bundle shipping a Jacobian kernel", async () => {
    const fn = (x: Tensor) => (jacobian((e: SR2) => e.mul(e.tr()))(new SR2(x)) as SSR4).t;
    const f = trace(fn, [spec("float64", ["B"], [6])]);
    const g = await loadBundle(await importBundle(f.bundle()));
    const s = rand(12, 13);
    const x = fromTypedArray(Float64Array.from(s), [2, 6], { batchDim: 1 });
    const J = (await g(x)) as Tensor;
    // d(s·tr s)/ds = tr s · I + s ⊗ [1,1,1,0,0,0]
    const want: number[] = [];
    for (let b = 0; b < 2; b++) {
      const v = s.slice(b * 6, b * 6 + 6);
      const tr = v[0]! + v[1]! + v[2]!;
      for (let i = 0; i < 6; i++) for (let j = 0; j < 6; j++) want.push((i === j ? tr : 0) + (j < 3 ? v[i]! : 0));
    }
    close(flat(J), want);
  });

  it("jagged inputs: derivatives per row", () => {
    const jt = jagged([tensor([1, 2], f64), tensor([3, 4, 5], f64)]);
    // per row: the row sum of squares; d/dx = 2x
    const g = grad((j: typeof jt) => j.sum().mul(j.sum()).batchSum())(jt) as typeof jt;
    const rows = [
      [1, 2],
      [3, 4, 5],
    ];
    const want = rows.flatMap((r) => r.map(() => 2 * r.reduce((a, b) => a + b, 0)));
    close(flat(g.values), want);
  });

  it("TensorDict arguments: derivatives per entry", () => {
    const td = new TensorDict(
      { a: tensor([[1, 2]], { batchDim: 1, ...f64 }), b: tensor([3], { batchDim: 1, ...f64 }) },
      [1],
    );
    const g = grad((d: TensorDict) => d.getTensor("a").sum().mul(d.getTensor("b")).batchSum())(td) as TensorDict;
    expect(g).toBeInstanceOf(TensorDict);
    close(flat(g.getTensor("a")), [3, 3]);
    close(flat(g.getTensor("b")), [3]);
  });
});

describe("composition inside jit", () => {
  it("jagged and TensorDict arguments, one trace for new sizes", () => {
    const f = jit((j: JaggedTensor) => grad((k: JaggedTensor) => k.sum().mul(k.sum()).batchSum())(j) as JaggedTensor);
    // per row: d(row sum)²/dx = 2·(row sum)
    expect(flat(f(jagged([tensor([1, 2], f64), tensor([3, 4, 5], f64)])).values)).toEqual([6, 6, 24, 24, 24]);
    expect(flat(f(jagged([tensor([1], f64), tensor([3, 4, 5], f64), tensor([2, 2], f64)])).values)).toEqual([
      2, 24, 24, 24, 8, 8,
    ]);
    expect(f.stats.traces).toBe(1);
    const h = jit(
      (d: TensorDict) =>
        grad((e: TensorDict) => e.getTensor("a").sum().mul(e.getTensor("b")).batchSum())(d) as TensorDict,
    );
    const g = h(
      new TensorDict({ a: tensor([[1, 2]], { batchDim: 1, ...f64 }), b: tensor([3], { batchDim: 1, ...f64 }) }, [1]),
    );
    expect(flat(g.getTensor("a"))).toEqual([3, 3]);
    expect(flat(g.getTensor("b"))).toEqual([3]);
  });

  it("batch means over symbolic batch axes divide by the run-time count", () => {
    const f = jit((x: Tensor) => grad((t: Tensor) => t.batchMean([0, 1]).sum())(x));
    const g = jit((x: Tensor) => grad((t: Tensor) => t.batchMean(1).sum().batchSum())(x));
    const x = tensor(
      [
        [
          [1, 2],
          [3, 4],
          [5, 6],
        ],
      ],
      { batchDim: 2, ...f64 },
    ); // (1,3; 2)
    close(flat(f(x)), new Array(6).fill(1 / 3));
    close(flat(g(x)), new Array(6).fill(1 / 3));
    const y = tensor([[[1, 2]], [[3, 4]]], { batchDim: 2, ...f64 }); // (2,1; 2): a new size, no new trace
    close(flat(f(y)), new Array(4).fill(1 / 2));
    close(flat(g(y)), new Array(4).fill(1));
    expect(f.stats.traces).toBe(1);
  });

  it("reverse mode through a batch reshape of several symbolic dims is refused with a typed error; forward mode works", () => {
    const x = tensor([[[1, 2]], [[3, 4]]], { batchDim: 2, ...f64 });
    const f = jit((t: Tensor) => grad((u: Tensor) => u.batchReshape([-1]).sin().sum().batchSum())(t));
    expect(() => f(x)).toThrow(UnsupportedOpError);
    expect(() => f(x)).toThrow("batch_reshape: no derivative through symbolic batch dims (b0,b1; 2)");
    const g = jit((t: Tensor) => jvp((u: Tensor) => u.batchReshape([-1]).sin(), [t], [t.mul(0).add(1)])[1]);
    close(flat(g(x)), [1, 2, 3, 4].map(Math.cos));
    // eagerly (concrete sizes) reverse mode works too
    close(flat(grad((u: Tensor) => u.batchReshape([-1]).sin().sum().batchSum())(x)), [1, 2, 3, 4].map(Math.cos));
  });
});

describe("bad input", () => {
  it("typed errors naming the function and the shapes", () => {
    const x = tensor([[1, 2]], { batchDim: 1, ...f64 });
    expect(() => grad((t: Tensor) => t.mul(2))(x)).toThrow(ShapeError);
    expect(() => grad((t: Tensor) => t.mul(2))(x)).toThrow("grad: f must return one tensor with an empty base");
    expect(() => grad((t: Tensor) => t.sum(), { argnums: 3 })(x)).toThrow("grad: argnums 3");
    expect(() => grad(3 as never)).toThrow(DTypeError);
    expect(() => grad((t: unknown) => t as Tensor)("x" as never)).toThrow(DTypeError);
    expect(() => jvp((t: Tensor) => t, [x], [tensor([1, 2, 3], f64)])).toThrow(
      "jvp: tangent 0 (;3) float64 does not match primal 0 (1; 2) float64",
    );
    expect(() => grad((t: Tensor) => t.sum().cast("int32"))(x)).toThrow(
      "grad: f must return a float tensor, got int32 (1;)",
    );
    expect(() => jvp((t: Tensor) => t, [x], [])).toThrow("jvp: primals and tangents must be arrays of the same length");
    const [, back] = vjp((t: Tensor) => t.sum(0), x);
    expect(() => back(tensor([[1, 2]], f64))).toThrow("vjp: cotangent (;1,2) does not match the result (1;)");
    expect(() => back([x, x] as never)).toThrow(ShapeError);
    void Scalar;
  });
});
