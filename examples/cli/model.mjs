// A module for the batchwise CLI. In this repository (after `npm run build`):
//   node dist/src/cli.js dump examples/cli/model.mjs --export det3 --spec "f32[B; 3,3]" --after fuse
//   node dist/src/cli.js bundle examples/cli/model.mjs --export centre --spec "f32[B; 4,3]" -o centre.bundle.mjs
//   node dist/src/cli.js inspect centre.bundle.mjs
// In a project that installed batchwise, the same with `npx batchwise ...`.
// Exports are plain functions of tensors (the CLI traces them from the specs, with no data).
import { R2, tensor } from "batchwise";

/** The determinant of each 3x3 matrix: `(B; 3,3) -> (B;)`. */
export function det3(m) {
  return new R2(m).det().t;
}

// A realized tensor the function closes over: captured as a constant of the bundle.
const weights = tensor([0.5, 1, 2]);

/** Each row minus the mean row, scaled per column: `(B; 4,3) -> (B; 4,3)`. */
export function centre(x) {
  return x.sub(x.mean(0, { keepdim: true })).mul(weights);
}
