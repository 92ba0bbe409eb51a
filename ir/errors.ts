/**
 * The base class of batchwise's errors. Every user-facing error names the op,
 * the argument and the shapes involved in `(batch; base)` notation; its
 * subclasses say what kind of problem it is.
 */
export class BatchwiseError extends Error {
  // Written out, not `new.target.name`: a minifier renames classes, and users' bundles are minified.
  /** The class name, kept under minification (`e.name` in messages and checks). */
  override name = "BatchwiseError";
}

/** Shapes that cannot meet: broadcasting, reshapes, axis out of range. */
export class ShapeError extends BatchwiseError {
  /** The class name, kept under minification (`e.name` in messages and checks). */
  override name = "ShapeError";
}

/** A dtype the op cannot take (or float64 on WebGPU). */
export class DTypeError extends BatchwiseError {
  /** The class name, kept under minification (`e.name` in messages and checks). */
  override name = "DTypeError";
}

/** An op the IR, a pass or a backend does not know. */
export class UnsupportedOpError extends BatchwiseError {
  /** The class name, kept under minification (`e.name` in messages and checks). */
  override name = "UnsupportedOpError";
}

/** IR text that does not parse, or a graph that fails the verifier. */
export class IRError extends BatchwiseError {
  /** The class name, kept under minification (`e.name` in messages and checks). */
  override name = "IRError";
}

/** Misuse of `jit`/`trace`: a traced value read on the host, a non-tensor output. */
export class TraceError extends BatchwiseError {
  /** The class name, kept under minification (`e.name` in messages and checks). */
  override name = "TraceError";
}

/** A backend failure: no adapter, device lost, a limit exceeded, a WGSL compile error. */
export class BackendError extends BatchwiseError {
  /** The class name, kept under minification (`e.name` in messages and checks). */
  override name = "BackendError";
}

/** A bundle that is not one, is from another format version, or does not match its own graph. */
export class BundleError extends BatchwiseError {
  /** The class name, kept under minification (`e.name` in messages and checks). */
  override name = "BundleError";
}

/** A key a TensorDict does not have, or key sets that do not match (Python's KeyError). */
export class KeyError extends BatchwiseError {
  /** The class name, kept under minification (`e.name` in messages and checks). */
  override name = "KeyError";
}
