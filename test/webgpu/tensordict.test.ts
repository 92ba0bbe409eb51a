/**
 * TensorDicts on WebGPU: the same code runs on the JS backend and on WebGPU
 * (entries uploaded there), and every entry must be equal exactly (these ops
 * copy, they do not compute). Also checks the results live on the device and
 * that unpadSequence reads the masks padSequence made there (they keep a host copy).
 */
import { expect, it } from "vitest";
import {
  arange,
  getBackend,
  jit,
  lazyStack,
  padSequence,
  setBackend,
  stack,
  cat,
  tensor,
  TensorDict,
  unpadSequence,
  type Tensor,
} from "../../src/index.js";
import { registerBackend } from "../../src/backend.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";

const probe = await probeWebGPUForFile();

/** Members of lengths 3 and 1: x (L; 2) float32, n.k (L;) int32. */
function members(): TensorDict[] {
  return [
    new TensorDict(
      {
        x: tensor(
          [
            [1, 2],
            [3, 4],
            [5, 6],
          ],
          { batchDim: 1 },
        ),
        n: { k: tensor([7, 8, 9], { batchDim: 1, dtype: "int32" }) },
      },
      [3],
    ),
    new TensorDict(
      { x: tensor([[10, 20]], { batchDim: 1 }), n: { k: tensor([30], { batchDim: 1, dtype: "int32" }) } },
      [1],
    ),
  ];
}

async function entries(td: TensorDict): Promise<[string, readonly number[], number[]][]> {
  return Promise.all(
    td
      .leaves()
      .map(
        async ([p, v]) =>
          [p.join("."), (v as Tensor).shape, Array.from(await (v as Tensor).data())] as [
            string,
            readonly number[],
            number[],
          ],
      ),
  );
}

describeWebGPU(probe, "TensorDict on WebGPU against the JS backend", (gpu) => {
  /** Runs `f` on JS, then on WebGPU, and compares every entry of every returned TensorDict. */
  async function same(what: string, f: () => TensorDict[]): Promise<void> {
    setBackend("js");
    const want = await Promise.all(f().map(entries));
    registerBackend(gpu);
    setBackend("webgpu");
    try {
      const outs = f();
      for (const td of outs)
        for (const [p, v] of td.leaves())
          expect(
            (v as Tensor)._src.kind === "lazy" || ((v as Tensor)._src as { backend?: unknown }).backend === gpu,
            `${what}: ${p.join(".")} is on WebGPU`,
          ).toBe(true);
      expect(await Promise.all(outs.map(entries)), what).toEqual(want);
    } finally {
      setBackend("js");
    }
  }

  it("stack, cat and batch ops", async () => {
    await same("stack/cat", () => {
      const [a] = members();
      return [stack([a!, a!], 1), cat([a!, a!]), a!.batchSlice(0, 1).batchIndex(0, 1).batchUnsqueeze(0)];
    });
  });

  it("padSequence with masks, then unpadSequence from those masks, left padding", async () => {
    await same("pad/unpad", () => {
      const padded = padSequence(members(), { paddingValue: -1, paddingSide: "left", returnMask: true });
      const back = unpadSequence(padded);
      return [padded, back.member(0), back.member(1)];
    });
    expect(getBackend().name).toBe("js");
  });

  it("lazy stack entries as padded tensors and densified", async () => {
    await same("lazy", () => {
      const ls = lazyStack(members());
      return [
        new TensorDict({ p: ls.get("x", { asPaddedTensor: true, paddingValue: 5 }) as Tensor }, [2]),
        ls.batchIndex(0, 1) as TensorDict,
      ];
    });
  });

  it("a jit function of TensorDicts runs on WebGPU (callAsync) at two batch sizes with one trace", async () => {
    const f = jit(
      (td: TensorDict) =>
        new TensorDict(
          {
            z: td
              .getTensor("x")
              .mul(2)
              .add(td.getTensor(["n", "y"])),
          },
          td.batchSize,
        ),
    );
    const input = (B: number) =>
      new TensorDict(
        {
          x: arange(B * 3)
            .reshape([B, 3])
            .rebatch(1),
          n: { y: arange(B).reshape([B, 1]).rebatch(1) },
        },
        [B],
      );
    for (const B of [3, 70]) {
      setBackend("js");
      const want = Array.from(await f(input(B)).getTensor("z").data());
      registerBackend(gpu);
      setBackend("webgpu");
      try {
        const got = await f.callAsync(input(B));
        expect(got.getTensor("z").toString()).toBe(`(${B}; 3)`);
        expect(Array.from(await got.getTensor("z").data())).toEqual(want);
      } finally {
        setBackend("js");
      }
    }
    // One trace per backend (the trace key holds the backend), none per batch size.
    expect(f.stats.traces).toBe(2);
  });
});
