/**
 * Typed errors. Every user-facing error names the op, the argument and the shapes
 * involved in `(batch; base)` notation (docs/ARCHITECTURE.md, Errors).
 */
export class BatchwiseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Shapes that cannot meet: broadcasting, reshapes, axis out of range. */
export class ShapeError extends BatchwiseError {}

/** A dtype the op cannot take (or float64 on WebGPU). */
export class DTypeError extends BatchwiseError {}

/** An op the IR, a pass or a backend does not know. */
export class UnsupportedOpError extends BatchwiseError {}

/** IR text that does not parse, or a graph that fails the verifier. */
export class IRError extends BatchwiseError {}

/** Misuse of `jit`/`trace`: a traced value read on the host, a non-tensor output. */
export class TraceError extends BatchwiseError {}

/** A backend failure: no adapter, device lost, a limit exceeded, a WGSL compile error. */
export class BackendError extends BatchwiseError {}

/** A bundle that is not one, is from another format version, or does not match its own graph. */
export class BundleError extends BatchwiseError {}

/** A key a TensorDict does not have, or key sets that do not match (Python's KeyError). */
export class KeyError extends BatchwiseError {}
