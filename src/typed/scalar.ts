/** Scalar `()`: a batched number. Times any typed value it broadcasts over the base (NEML2's scalar rule). */
import { Tensor } from "../tensor.js";
import { fillDType, scalarsOf } from "./fill.js";
import { PrimitiveTensor, optDType, raw, type ScalarLike, type TypedOptions } from "./base.js";

/** Scalar `()`: a batched number. Times any typed value it broadcasts over the base (NEML2's scalar rule). */
export class Scalar extends PrimitiveTensor<Scalar, "Scalar"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "Scalar";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [];

  /** `Scalar.fill(2.5)` is `(;)`. */
  static fill(value: number, opts: TypedOptions = {}): Scalar {
    const dtype = fillDType([value], optDType("Scalar.fill", opts), "Scalar.fill");
    return new Scalar(scalarsOf([value], dtype, "Scalar.fill")[0]!);
  }

  /** Scalar ⊕ prim gives the prim; Scalar ⊕ Scalar/number gives a Scalar. */
  override add<T extends PrimitiveTensor<T>>(y: T): T;
  override add(y: ScalarLike): Scalar;
  override add(y: PrimitiveTensor<unknown> | number): unknown {
    return this.broadcast("add", y);
  }
  /** Scalar ⊖ prim gives the prim; Scalar ⊖ Scalar/number gives a Scalar. */
  override sub<T extends PrimitiveTensor<T>>(y: T): T;
  override sub(y: ScalarLike): Scalar;
  override sub(y: PrimitiveTensor<unknown> | number): unknown {
    return this.broadcast("sub", y);
  }
  /** Scalar times a prim scales it (a prim of the same type); times a Scalar or number, a Scalar. */
  override mul<T extends PrimitiveTensor<T>>(y: T): T;
  override mul(y: ScalarLike): Scalar;
  override mul(y: PrimitiveTensor<unknown> | number): unknown {
    return this.broadcast("mul", y);
  }
  /** Scalar divided by a prim gives the prim (elementwise); by a Scalar or number, a Scalar. */
  override div<T extends PrimitiveTensor<T>>(y: T): T;
  override div(y: ScalarLike): Scalar;
  override div(y: PrimitiveTensor<unknown> | number): unknown {
    return this.broadcast("div", y);
  }

  /** NEML2's scalar rule for `op`: with a number or a Scalar, a Scalar; with a prim, the prim's type. */
  private broadcast(op: "add" | "sub" | "mul" | "div", y: PrimitiveTensor<unknown> | number): unknown {
    const t = this.t[op](raw(y, `Scalar.${op}`));
    return typeof y === "number" || y instanceof Scalar ? new Scalar(t) : rewrap(y, t);
  }

  /** `x ** y`. */
  pow(y: ScalarLike): Scalar {
    return new Scalar(this.t.pow(raw(y, "Scalar.pow", "y")));
  }
  /** The larger of `x` and `y`. */
  maximum(y: ScalarLike): Scalar {
    return new Scalar(this.t.maximum(raw(y, "Scalar.maximum", "y")));
  }
  /** The smaller of `x` and `y`. */
  minimum(y: ScalarLike): Scalar {
    return new Scalar(this.t.minimum(raw(y, "Scalar.minimum", "y")));
  }
  /** Limits values to [lo, hi]. */
  clip(lo: ScalarLike, hi: ScalarLike): Scalar {
    return new Scalar(this.t.clip(raw(lo, "Scalar.clip", "lo"), raw(hi, "Scalar.clip", "hi")));
  }
  /** Absolute value. */
  abs(): Scalar {
    return new Scalar(this.t.abs());
  }
  /** Square root. */
  sqrt(): Scalar {
    return new Scalar(this.t.sqrt());
  }
  /** `e^x`. */
  exp(): Scalar {
    return new Scalar(this.t.exp());
  }
  /** Natural logarithm. */
  log(): Scalar {
    return new Scalar(this.t.log());
  }
  /** Sine (radians). */
  sin(): Scalar {
    return new Scalar(this.t.sin());
  }
  /** Cosine (radians). */
  cos(): Scalar {
    return new Scalar(this.t.cos());
  }
  /** Tangent (radians). */
  tan(): Scalar {
    return new Scalar(this.t.tan());
  }
  /** Hyperbolic tangent. */
  tanh(): Scalar {
    return new Scalar(this.t.tanh());
  }
  /** Inverse sine in [-π/2, π/2]. */
  asin(): Scalar {
    return new Scalar(this.t.asin());
  }
  /** Inverse cosine in [0, π]. */
  acos(): Scalar {
    return new Scalar(this.t.acos());
  }
  /** Inverse tangent in [-π/2, π/2]. */
  atan(): Scalar {
    return new Scalar(this.t.atan());
  }
  /** `atan2(this, x)`: the angle of the point (x, this). */
  atan2(x: ScalarLike): Scalar {
    return new Scalar(this.t.atan2(raw(x, "Scalar.atan2", "x")));
  }
  /** `⟨x⟩ = max(x, 0)` (NEML2's `macaulay`). */
  macaulay(): Scalar {
    return new Scalar(this.t.maximum(0));
  }

  /** The single value of an unbatched Scalar (JS backend). */
  itemSync(): number {
    return this.t.itemSync();
  }
}

function rewrap<T>(like: PrimitiveTensor<T>, t: Tensor): T {
  return new (like.constructor as new (t: Tensor) => T)(t);
}
