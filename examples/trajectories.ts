/**
 * `npx tsx examples/trajectories.ts`: episodes of different lengths as
 * TensorDicts, padded into one batch with masks, normalised by a jit function
 * traced once (for any number of episodes and any lengths), then split back.
 *
 * Each episode holds `obs (T; 2)` and `reward (T;)`. Steps are numbered
 * 0, 1, 2, … across all episodes, obs = [step, -step] and reward = step / 10,
 * so every printed number can be checked by hand.
 */
import {
  jit,
  lazyStack,
  padSequence,
  tensor,
  TensorDict,
  unpadSequence,
  type JaggedTensor,
  type Tensor,
} from "batchwise";

function episodes(lengths: readonly number[]): TensorDict[] {
  let step = 0;
  return lengths.map((T) => {
    const steps = Array.from({ length: T }, () => step++);
    return new TensorDict(
      {
        obs: tensor(
          steps.map((s) => [s, -s]),
          { batchDim: 1 },
        ),
        reward: tensor(
          steps.map((s) => s / 10),
          { batchDim: 1 },
        ),
      },
      [T],
    );
  });
}

/**
 * On a padded batch `[B, maxT]`: the mean observation over the valid steps of
 * all episodes, subtracted from every valid step (padding stays 0), and each
 * episode's total reward.
 */
const normalise = jit((batch: TensorDict) => {
  const obs = batch.getTensor("obs"); // (B, maxT; 2)
  const valid = batch.getTensor(["masks", "obs"]).cast("float32").unsqueeze(0); // (B, maxT; 1)
  const mean = obs
    .mul(valid)
    .batchSum([0, 1])
    .div(valid.batchSum([0, 1])); // (; 2)
  const returns = batch
    .getTensor("reward")
    .mul(batch.getTensor(["masks", "reward"]).cast("float32"))
    .batchSum(1); // (B;)
  return [
    new TensorDict(
      { obs: obs.sub(mean).mul(valid), reward: batch.getTensor("reward"), masks: batch.getDict("masks") },
      batch.batchSize,
    ),
    returns,
  ] as const;
});

export function run(lengths: readonly number[]): {
  mean0: number;
  returns: number[];
  firstObs: number[][];
  traces: number;
  rows: number[];
} {
  const eps = episodes(lengths);
  const padded = padSequence(eps, { returnMask: true }); // batchSize [B, maxT], masks under "masks"
  const [normalised, returns] = normalise(padded);
  const back = unpadSequence(normalised); // lazy stack of [T_i] episodes, masks dropped
  const rewards = lazyStack(back.unbind()).get("reward", { asJagged: true }) as JaggedTensor;
  return {
    mean0: (normalised.getTensor("obs").toArraySync() as number[][][])[0]![0]![0]!,
    returns: Array.from((returns as Tensor).dataSync()),
    firstObs: back.member(0).getTensor("obs").toArraySync() as number[][],
    traces: normalise.stats.traces,
    rows: Array.from(rewards.lengths.dataSync()),
  };
}

// Run as a script: two batches of episodes, one trace.
if (process.argv[1]?.endsWith("trajectories.ts")) {
  for (const lengths of [
    [3, 1, 2],
    [4, 4, 1, 5, 2],
  ]) {
    const r = run(lengths);
    console.log(
      `lengths ${JSON.stringify(lengths)}: returns ${JSON.stringify(r.returns.map((v) => +v.toFixed(4)))}, episode 0 obs ${JSON.stringify(r.firstObs)}, rows back ${JSON.stringify(r.rows)}`,
    );
  }
  console.log(`traces: ${normalise.stats.traces}`);
}
