/**
 * Writes the bundles of plain-tensor arguments and compound results that
 * test/runtime/runtime-entry.test.ts loads into pages bundled without the
 * compiler, in a process of its own: prints JSON `{ jagged, dict }`, two module texts.
 *   jagged(v (N;), o int32 (B+1;)) = JaggedTensor(2v, o)
 *   dict(x (B; 2)) = TensorDict { a: x + 1 } of batch size ()
 */
import { JaggedTensor, TensorDict, fromTypedArray, jit, tensor, type Tensor } from "../../src/index.js";

const j = jit((v: Tensor, o: Tensor) => new JaggedTensor(v.mul(2), o));
j(tensor([1, 2], { batchDim: 1 }), fromTypedArray(new Int32Array([0, 2]), [2], { batchDim: 1 }));
const d = jit((x: Tensor) => new TensorDict({ a: x.add(1) }, []));
d(tensor([[1, 2]], { batchDim: 1 }));
process.stdout.write(JSON.stringify({ jagged: j.bundle(), dict: d.bundle() }));
