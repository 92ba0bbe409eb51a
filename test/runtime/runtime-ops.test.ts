/**
 * batchwise/runtime has no compiler, so it leaves out the eager Tensor operations
 * (src/api/tensor-ops.ts): each is a stub there that throws a BackendError naming
 * the full entry. Installing the operations (as the full entry's compiler does)
 * replaces every stub with the real method, which records the node the IR type
 * rule gives. This file's process never loads the compiler.
 */
import { describe, expect, it } from "vitest";
import { BackendError, Tensor, tensor } from "../../src/runtime-entry.js";
import { installTensorOps, TENSOR_OP_NAMES } from "../../src/api/tensor-ops.js";

type Methods = Record<string, (...a: unknown[]) => unknown>;

describe("batchwise/runtime: eager operations", () => {
  it("every eager operation is a BackendError stub until installed, then the real method", () => {
    const x = tensor([[1, 2, 3]], { batchDim: 1 });
    const m = x as unknown as Methods;
    expect(TENSOR_OP_NAMES).toEqual(expect.arrayContaining(["add", "sum", "reshape", "batchSlice", "batchIndex"]));
    for (const name of TENSOR_OP_NAMES) {
      expect(typeof m[name], name).toBe("function");
      expect(() => m[name]!.call(x, 1), name).toThrow(BackendError);
      expect(() => m[name]!.call(x, 1), name).toThrow(
        new RegExp(
          `^${name} of x \\(1; 3\\): computing tensor operations needs the compiler of the full batchwise entry`,
        ),
      );
    }
    installTensorOps();
    for (const name of TENSOR_OP_NAMES) {
      expect((m[name] as { stub?: boolean }).stub, name).toBeUndefined();
      expect(Object.getOwnPropertyDescriptor(Tensor.prototype, name)?.enumerable, name).toBe(false);
    }
    // (1; 3) + 1 is (1; 3); the sum over the base is (1;); a (3,) -> (3, 1) reshape; a lazy node each.
    expect(x.add(1).toString()).toBe("(1; 3)");
    expect(x.sum().toString()).toBe("(1;)");
    expect(x.reshape([3, 1]).toString()).toBe("(1; 3,1)");
    expect(x.add(1)._src.kind).toBe("lazy");
    // Installing again changes nothing.
    const add = Tensor.prototype.add;
    installTensorOps();
    expect(Tensor.prototype.add).toBe(add);
  });
});
