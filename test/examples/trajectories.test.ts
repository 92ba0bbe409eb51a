/**
 * examples/trajectories.ts runs and gives the numbers worked out by hand in its
 * header: steps are numbered across episodes, obs = [step, -step], reward = step / 10.
 */
import { expect, it } from "vitest";
import { run } from "../../examples/trajectories.js";

it("pads episodes of lengths 3,1,2 and 4,4,1,5,2, normalises them with one trace, and splits them back", () => {
  // Steps 0..5: the mean obs is [2.5, -2.5]; returns are (0+1+2)/10, 3/10, (4+5)/10.
  const a = run([3, 1, 2]);
  expect(a.firstObs).toEqual([
    [-2.5, 2.5],
    [-1.5, 1.5],
    [-0.5, 0.5],
  ]);
  expect(a.returns.map((v) => Math.round(v * 1e5) / 1e5)).toEqual([0.3, 0.3, 0.9]);
  expect(a.rows).toEqual([3, 1, 2]);
  // Steps 0..15: mean 7.5; returns (0..3)/10, (4..7)/10, 8/10, (9..13)/10, (14+15)/10.
  const b = run([4, 4, 1, 5, 2]);
  expect(b.mean0).toBe(-7.5);
  expect(b.returns.map((v) => Math.round(v * 1e5) / 1e5)).toEqual([0.6, 2.2, 0.8, 5.5, 2.9]);
  expect(b.rows).toEqual([4, 4, 1, 5, 2]);
  expect(b.traces).toBe(1);
});
