/**
 * The tests that fail, by design, when the whole suite runs with the WebAssembly backend
 * current (`BATCHWISE_TEST_BACKEND=wasm`, see ./backend-setup.ts), each with the reason
 * and a check of its failure: the setup file marks these tests as expected to fail, and a
 * failure counts as expected only when every error of it passes the check (so a listed test
 * that fails for another reason, or that passes, still fails the run).
 *
 * The reasons, in three groups:
 * - float32 math within its documented bound: wasm's float32 transcendental functions are
 *   within 1-2 ulp of the correctly rounded result (README, "float32 vector math"), where
 *   the JS backend rounds Math's float64 result; the check parses every reported mismatch
 *   and accepts it only within that op's bound.
 * - float32 rounding after every op: the JS backend's `float32: "relaxed"` keeps
 *   intermediates in float64, wasm rounds each op, so an intermediate above the float32
 *   range (x·2, x·3, x·x near 3e38) is ±Infinity on wasm; accepted only for such inputs.
 * - tests of the JS backend itself (its name in messages, zero-copy wrapping of host
 *   typed arrays, a JS-only backend wrapper, worker processes that run on JS and must match
 *   bit for bit): accepted when the error is the one that difference gives.
 */

import { ULP_BOUND } from "../../codegen/wasm/math.js";
import { ordered } from "../wasm/ulp.js";

/** An expected failure: why, and a check of the failure's text (messages, diffs and causes). */
export interface ExpectedFailure {
  readonly why: string;
  readonly check: (text: string) => boolean;
}

/** The distance in float32 ulps between two finite float32 values (Infinity otherwise). */
function ulps(a: number, b: number): number {
  if (!Number.isFinite(a) || !Number.isFinite(b) || Math.fround(a) !== a || Math.fround(b) !== b) return Infinity;
  return Math.abs(ordered(a) - ordered(b));
}

/**
 * The special-value suite's mismatches ("sin/float32 (1): got a, expected b"): all of them
 * reported (the count in the message; the text holds each line twice, in the value and in
 * the diff), each of an op with a bound and within it.
 */
function withinUlpBounds(text: string): boolean {
  const count = /(\d+) mismatches/.exec(text);
  if (count === null) return false;
  const re = /"(\w+)\/\w+ \([^"]*\): got ([^,"\s]+), expected ([^,"\s]+)"/g;
  const seen = new Set<string>();
  for (const m of text.matchAll(re)) {
    const bound = (ULP_BOUND as Readonly<Record<string, number>>)[m[1]!];
    if (bound === undefined || ulps(Number(m[2]), Number(m[3])) > bound) return false;
    seen.add(m[0]);
  }
  return seen.size > 0 && seen.size === Math.min(Number(count[1]), 25);
}

/** The algebraic-rule mismatches: a non-finite result only where an intermediate leaves the float32 range. */
function float32Overflow(text: string): boolean {
  const count = /(\d+) mismatches/.exec(text);
  if (count === null) return false;
  const re = /"[^"]* \(([^()"]*)\): got ([^,"\s]+), expected ([^,"\s]+)"/g;
  const seen = new Set<string>();
  for (const m of text.matchAll(re)) {
    const x = Number(m[1]);
    const got = Number(m[2]);
    // x·x overflows float32 from |x| = 1.85e19 on (x·2 and x·3 from 1.1e38).
    if (Number.isFinite(got) || !Number.isFinite(Number(m[3])) || !(Math.abs(x) >= 1.8e19)) return false;
    seen.add(m[0]);
  }
  return seen.size > 0 && seen.size === Math.min(Number(count[1]), 25);
}

/** inverse-trig's property: "element i: got a, expected b" within 2 ulps (a chain of ops of bound 1-2). */
function elementWithinTwoUlps(text: string): boolean {
  const m = /element \d+: got (\S+), expected ([^\s:]+)/.exec(text);
  return m !== null && ulps(Number(m[1]), Number(m[2])) <= 2;
}

const matches =
  (re: RegExp) =>
  (text: string): boolean =>
    re.test(text);

const SPECIAL = "test/src/special-values.test.ts";
const unaryGrid: [string, ExpectedFailure][] = ["'eager'", "'jit'", "'jit exact'"].flatMap((mode) =>
  ["float32", "int32", "uint32", "bool"].map((d): [string, ExpectedFailure] => [
    `${SPECIAL} > special values on JS (${mode}) > unary ops on the ${d} grid`,
    { why: "float32 transcendental functions within their ulp bound (sin(1) is 1 ulp off)", check: withinUlpBounds },
  ]),
);
const DISTRIBUTED = "test/distributed/distributed.test.ts > batchwise/distributed on a real Redis and worker processes";
const distributed: [string, ExpectedFailure][] = [
  "shards 1e6 elements over 3 CLI worker processes; the result equals the single-process call bit for bit",
  "shards a jagged batch of 10,000 rows (empty rows included) by rows; jagged and plain results equal the single-process call bit for bit",
  "shards a TensorDict (nested dicts, a jagged entry, an int entry) with a plain parameter and a parameter dict; TensorDict results are gathered; equal to the single-process call bit for bit",
  "a worker SIGKILLed mid-shard: its shard is taken over and the result is still complete and exact",
  "Redis restarted mid-run (with its append-only file): clients reconnect and the result is exact",
  "no job events at all (XREAD denied by an ACL): the reconciling poll still gathers every shard, exactly",
].map((name) => [
  `${DISTRIBUTED} > ${name}`,
  {
    why: "the worker processes run on the JS backend (exp, sin, tanh rounded from float64), the single-process reference on wasm: equal bits cannot be",
    check: matches(/expected false to be true/),
  },
]);

/** Full test name (`file > describe > test`, as vitest prints it) → the expected failure. */
export const WASM_EXPECTED: ReadonlyMap<string, ExpectedFailure> = new Map<string, ExpectedFailure>([
  ...unaryGrid,
  ...["'eager'", "'jit'"].map((mode): [string, ExpectedFailure] => [
    `${SPECIAL} > algebraic rules keep NaN, ±Inf and signed zeros (JS) > ${mode}`,
    {
      why: 'float32 rounded after every op (JS "relaxed" keeps float64 intermediates): x·2, x·3, x·x of x near 3e38 overflow',
      check: float32Overflow,
    },
  ]),
  [
    "test/src/inverse-trig.test.ts > inverse trigonometric ops > run in fused jit kernels, exact and relaxed float32, as Math rounded per op",
    {
      why: "the chain's sin is 1 ulp off on wasm (a subnormal atan2 result, exact float32 asserted bit for bit)",
      check: elementWithinTwoUlps,
    },
  ],
  [
    "test/src/backend-caps.test.ts > Tensor.to between JS backends > is a no-op on the tensor's own backend, by object or by name",
    { why: "the tensor is made on wasm, so to('js') copies it", check: matches(/expected Tensor\{.*to be Tensor\{/) },
  ],
  [
    "test/src/backend-caps.test.ts > Tensor.to between JS backends > refuses an unknown or uninitialised backend and a value that is no backend with BackendError",
    {
      why: "the message lists the initialised backends, wasm too",
      check: matches(/initialised backends are "js", "wasm"/),
    },
  ],
  [
    "test/src/backend-caps.test.ts > Tensor.to between JS backends > moves a jagged tensor's values and offsets",
    {
      why: "the jagged tensor is made on wasm, so to('js') copies it",
      check: matches(/expected JaggedTensor\{.*to be JaggedTensor\{/),
    },
  ],
  [
    "test/src/backend-caps.test.ts > jit and arguments on another backend > an argument its backend cannot bind is a BackendError that says to move it",
    {
      why: "the message names the argument's backend, wasm",
      check: matches(/lives on the wasm backend, but this function runs on js/),
    },
  ],
  [
    "test/src/bundle.test.ts > bundles > refuse what is not a bundle, another version, a tampered graph or step, and arguments that do not match",
    {
      why: "the message names the backend the bundle was traced on, wasm",
      check: matches(/the bundle was traced on wasm/),
    },
  ],
  [
    "test/src/jit.test.ts > jit is transactional: a failed trace leaves no state > a compile that fails (synchronously or asynchronously) caches nothing: the next call compiles again",
    {
      why: "the test wraps the JS backend (and reads JS kernel source); its inputs are made on wasm",
      check: matches(/lives on the wasm backend, but this function runs on js/),
    },
  ],
  [
    "test/src/validation.test.ts > what input data becomes (case 7) > reads a Uint8Array as uint8, or as bool (x != 0) when asked; a dtype converts as cast does",
    {
      why: "fromTypedArray(…, { copy: false }) wraps a host array only on the JS backend (wasm copies it into its memory)",
      check: matches(/expected Uint8Array\[.*to be Uint8Array\[/),
    },
  ],
  [
    "test/ragged/offsets.test.ts > jagged offsets inside jit and bundles > zero-copy host offsets changed by the caller after a good call are checked again",
    {
      why: "wasm copies host offsets into its memory, so the caller's later change does not reach them",
      check: matches(/expected \[Function\] to throw an error/),
    },
  ],
  [
    "test/dtypes/narrow.test.ts > narrow dtypes on JS > float16 is a DTypeError on JS that says why",
    { why: "the message names the backend, WebAssembly", check: matches(/is float16, which WebAssembly cannot hold/) },
  ],
  [
    "test/dtypes/narrow.test.ts > .npy with the narrow dtypes > reads and writes float16 files; loading one on JS is a DTypeError",
    { why: "the message names the backend, WebAssembly", check: matches(/is float16, which WebAssembly cannot hold/) },
  ],
  [
    "test/io/npy.test.ts > loadNpy reads NumPy's files > NumPy dtypes batchwise cannot hold are DTypeErrors naming the dtype",
    { why: "the message names the backend, WebAssembly", check: matches(/is float16, which WebAssembly cannot hold/) },
  ],
  [
    "test/webgpu/bundle.test.ts > bundles on WebGPU > load the shipped WGSL and match the JS trace, jagged results included",
    {
      why: "the bundle is traced on the current backend (wasm), so the JS reference traces and compiles again",
      check: matches(/expected \d+ to be \d+/),
    },
  ],
  ...distributed,
]);
