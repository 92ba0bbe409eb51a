/**
 * `JaggedTensor.to(name)` takes every backend name `Tensor.to` takes (`BackendName`):
 * `jagged.to("wasm")` was refused by the type (its union lacked "wasm") though it ran.
 * The call below fails `tsc` on that type; the values are hand-written rows.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { fromTypedArray, jagged, type BackendName, type Tensor } from "../../src/index.js";
import { initWasm } from "../../src/wasm.js";

const ROWS = [
  [
    [1, 2, 3],
    [3, 2, 1],
  ],
  [],
  [[0, 0, 4]],
];

const on = (t: Tensor): string | undefined => (t._src.kind === "buffer" ? t._src.backend.name : undefined);

describe("JaggedTensor.to", () => {
  beforeAll(async () => {
    await initWasm({ select: false, threads: 1 });
  });

  it('to("wasm") moves values and offsets to wasm, and to("js") brings the same rows back', async () => {
    const j = jagged(ROWS.map((r) => fromTypedArray(Float32Array.from(r.flat()), [r.length, 3], { batchDim: 1 })));
    const w = await j.to("wasm");
    expect([on(w.values), on(w.offsets)]).toEqual(["wasm", "wasm"]);
    expect(Array.from(await w.values.data())).toEqual([1, 2, 3, 3, 2, 1, 0, 0, 4]);
    expect(Array.from(await w.offsets.data())).toEqual([0, 2, 2, 3]);
    expect(await w.to("wasm")).toBe(w);
    const back = await w.to("js");
    expect([on(back.values), on(back.offsets)]).toEqual(["js", "js"]);
    expect(back.values.toArraySync()).toEqual([
      [1, 2, 3],
      [3, 2, 1],
      [0, 0, 4],
    ]);
    expect(back.offsets.toArraySync()).toEqual([0, 2, 2, 3]);
  });

  it("takes every BackendName (the type Tensor.to takes)", () => {
    type Takes = Parameters<ReturnType<typeof jagged>["to"]>[0];
    const names: readonly BackendName[] = ["js", "webgpu", "wasm"];
    const asArg: readonly Takes[] = names;
    expect(asArg).toHaveLength(3);
  });
});
