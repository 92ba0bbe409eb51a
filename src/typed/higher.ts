/**
 * The higher-order types. Most are containers NEML2 uses for derivatives
 * (R5, SSFR5, R8, SSSSR8, SFR3, SFR4, WFR4): here they carry their static
 * base shape, the shared arithmetic and batch ops, and the conversions the
 * semantics define.
 */
import type { DType } from "../../ir/dtype.js";
import type { Tensor } from "../tensor.js";
import { PrimitiveTensor, optDType, need, type TypedOptions } from "./base.js";
import { assemble, cst, dotOf, vecOf } from "./components.js";
import { fullToMandel, fullToSkew } from "./mandel.js";
import { R2 } from "./r2.js";
import { Vec } from "./vec.js";

const F = "float32" as DType;

/** R3 `(3,3,3)`. */
export class R3 extends PrimitiveTensor<R3, "R3"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "R3";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [3, 3, 3];
  /** The permutation symbol εᵢⱼₖ. */
  static leviCivita(opts: TypedOptions = {}): R3 {
    const eps = (i: number, j: number, k: number) => ((i - j) * (j - k) * (k - i)) / 2;
    const c: Tensor[] = [];
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++)
        for (let k = 0; k < 3; k++) c.push(cst(eps(i, j, k), optDType("R3.leviCivita", opts) ?? F));
    return new R3(assemble(c, [3, 3, 3]));
  }
  /** `Aᵢⱼₖvₖ`: an R2. */
  contractK(v: Vec): R2 {
    need("R3.contractK", "v", v, Vec);
    const w = vecOf(v.t);
    const a = vecOf(this.t).map((row) => vecOf(row).map(vecOf));
    return new R2(
      assemble(
        a.flatMap((row) => row.map((x) => dotOf(x, w))),
        [3, 3],
      ),
    );
  }
}

/** R4 `(3,3,3,3)`. */
export class R4 extends PrimitiveTensor<R4, "R4"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "R4";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [3, 3, 3, 3];
  /** Swaps base axes `d1` and `d2`. */
  transpose(d1: number, d2: number): R4 {
    return new R4(this.t.transpose(d1, d2));
  }
  /** `ijkl → jilk`. */
  transposeMinor(): R4 {
    return new R4(this.t.permute(1, 0, 3, 2));
  }
  /** `ijkl → klij`. */
  transposeMajor(): R4 {
    return new R4(this.t.permute(2, 3, 0, 1));
  }
}

/**
 * `F + a·F^{T01} + b·F^{T23} + ab·F^{T01,23}` for an R4 `F` (the tensor of `f`), with `a`, `b`
 * each 1 (that minor pair symmetrised, times 2), -1 (skewed, times 2) or 0 (left as it is):
 * the part of `F` that SSR4, SWR4, WSR4 and WWR4 store.
 */
export function minorSum(f: R4, a: -1 | 0 | 1, b: -1 | 0 | 1): Tensor {
  const t = f.t;
  const plus = (s: Tensor, sign: number, x: Tensor) => (sign > 0 ? s.add(x) : s.sub(x));
  let s = t;
  if (a !== 0) s = plus(s, a, t.permute(1, 0, 2, 3));
  if (b !== 0) s = plus(s, b, t.permute(0, 1, 3, 2));
  if (a !== 0 && b !== 0) s = plus(s, a * b, t.permute(1, 0, 3, 2));
  return s;
}

/** SFR3 `(6,3)`. */
export class SFR3 extends PrimitiveTensor<SFR3, "SFR3"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "SFR3";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [6, 3];
}

/** SFR4 `(6,3,3)` (SFFR4 in later NEML2). */
export class SFR4 extends PrimitiveTensor<SFR4, "SFR4"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "SFR4";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [6, 3, 3];
}

/** WFR4 `(3,3,3)` (WFFR4 in later NEML2). */
export class WFR4 extends PrimitiveTensor<WFR4, "WFR4"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "WFR4";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [3, 3, 3];
}

/** SWR4 `(6,3)`: symmetric in the first pair, skew in the second. */
export class SWR4 extends PrimitiveTensor<SWR4, "SWR4"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "SWR4";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [6, 3];
  /**
   * `mandel₀₁(skew₂₃((F + F^{T01})/2))`. NEML2 omits the /2 here (but not in
   * WSR4), an upstream inconsistency we do not copy.
   */
  static fromR4(f: R4): SWR4 {
    need("SWR4.fromR4", "f", f, R4);
    return new SWR4(fullToMandel(fullToSkew(minorSum(f, 1, 0).mul(0.5), 2), 0));
  }
}

/** WSR4 `(3,6)`: skew in the first pair, symmetric in the second. */
export class WSR4 extends PrimitiveTensor<WSR4, "WSR4"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "WSR4";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [3, 6];
  /** `mandel(skew₀₁((F + F^{T23})/2), 1)`. */
  static fromR4(f: R4): WSR4 {
    need("WSR4.fromR4", "f", f, R4);
    return new WSR4(fullToMandel(fullToSkew(minorSum(f, 0, 1).mul(0.5), 0), 1));
  }
}

/** WWR4 `(3,3)`: skew in both pairs. */
export class WWR4 extends PrimitiveTensor<WWR4, "WWR4"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "WWR4";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [3, 3];
  /**
   * `skew₀₁(skew₂₃(F - F^{T01} - F^{T23} + F^{T01,23}))`, with no /4, as
   * NEML2 defines it. (Its `skew(…, 1)` is read as the second *pair*,
   * axes 2,3; axes 1,2 would mix the pairs.)
   */
  static fromR4(f: R4): WWR4 {
    need("WWR4.fromR4", "f", f, R4);
    return new WWR4(fullToSkew(fullToSkew(minorSum(f, -1, -1), 2), 0));
  }
}

/** R5 `(3,3,3,3,3)`. */
export class R5 extends PrimitiveTensor<R5, "R5"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "R5";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [3, 3, 3, 3, 3];
}

/** SSFR5 `(6,6,3)`. */
export class SSFR5 extends PrimitiveTensor<SSFR5, "SSFR5"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "SSFR5";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [6, 6, 3];
}

/** R8 `(3,)*8`. */
export class R8 extends PrimitiveTensor<R8, "R8"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "R8";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [3, 3, 3, 3, 3, 3, 3, 3];
}

/** SSSSR8 `(6,6,6,6)`. */
export class SSSSR8 extends PrimitiveTensor<SSSSR8, "SSSSR8"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "SSSSR8";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [6, 6, 6, 6];
}
