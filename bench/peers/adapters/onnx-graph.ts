// Build small ONNX models in code. The schema below is the subset of onnx.proto
// these graphs need (field numbers as in onnx/onnx.proto), encoded with
// protobufjs; batch dims are symbolic (dim_param), so one session serves every
// batch size.

import protobuf from "protobufjs";

const SCHEMA = `
syntax = "proto2";
package onnx;
message AttributeProto {
  enum AttributeType { UNDEFINED = 0; FLOAT = 1; INT = 2; STRING = 3; TENSOR = 4; GRAPH = 5; FLOATS = 6; INTS = 7; }
  optional string name = 1;
  optional float f = 2;
  optional int64 i = 3;
  optional bytes s = 4;
  repeated float floats = 7;
  repeated int64 ints = 8;
  optional AttributeType type = 20;
}
message ValueInfoProto { optional string name = 1; optional TypeProto type = 2; }
message NodeProto {
  repeated string input = 1;
  repeated string output = 2;
  optional string name = 3;
  optional string op_type = 4;
  repeated AttributeProto attribute = 5;
  optional string domain = 7;
}
message ModelProto {
  optional int64 ir_version = 1;
  optional string producer_name = 2;
  optional GraphProto graph = 7;
  repeated OperatorSetIdProto opset_import = 8;
}
message GraphProto {
  repeated NodeProto node = 1;
  optional string name = 2;
  repeated TensorProto initializer = 5;
  repeated ValueInfoProto input = 11;
  repeated ValueInfoProto output = 12;
}
message TensorProto {
  repeated int64 dims = 1;
  optional int32 data_type = 2;
  repeated float float_data = 4 [packed = true];
  repeated int64 int64_data = 7 [packed = true];
  optional string name = 8;
}
message TensorShapeProto {
  message Dimension { oneof value { int64 dim_value = 1; string dim_param = 2; } }
  repeated Dimension dim = 1;
}
message TypeProto {
  message Tensor { optional int32 elem_type = 1; optional TensorShapeProto shape = 2; }
  oneof value { Tensor tensor_type = 1; }
}
message OperatorSetIdProto { optional string domain = 1; optional int64 version = 2; }
`;

const FLOAT = 1;
const INT64 = 7;
const ATTR = { FLOAT: 1, INT: 2, INTS: 7 } as const;

/** Attribute values: plain numbers are ints; floats and int lists are tagged. */
export type Attr = { int: number } | { float: number } | { ints: number[] };
export type Dim = number | string;

const ModelProto = protobuf.parse(SCHEMA, { keepCase: true }).root.lookupType("onnx.ModelProto");

export class GraphBuilder {
  private nodes: object[] = [];
  private initializers: object[] = [];
  private inputs: object[] = [];
  private outputs: object[] = [];
  private next = 0;

  private valueInfo(name: string, dims: Dim[]): object {
    return {
      name,
      type: {
        tensor_type: {
          elem_type: FLOAT,
          shape: { dim: dims.map((d) => (typeof d === "number" ? { dim_value: d } : { dim_param: d })) },
        },
      },
    };
  }

  input(name: string, dims: Dim[]): string {
    this.inputs.push(this.valueInfo(name, dims));
    return name;
  }

  output(name: string, dims: Dim[]): void {
    this.outputs.push(this.valueInfo(name, dims));
  }

  /** A float32 constant (scalar when dims is []). */
  f32(values: number[], dims: number[] = []): string {
    const name = `c${this.next++}`;
    this.initializers.push({ name, data_type: FLOAT, dims, float_data: values });
    return name;
  }

  i64(values: number[], dims: number[] = [values.length]): string {
    const name = `c${this.next++}`;
    this.initializers.push({ name, data_type: INT64, dims, int64_data: values });
    return name;
  }

  /** Add a node; returns its output names (fresh unless given). */
  op(opType: string, inputs: string[], attrs: Record<string, Attr> = {}, outputs: number | string[] = 1): string[] {
    const outs = typeof outputs === "number" ? Array.from({ length: outputs }, () => `t${this.next++}`) : outputs;
    const attribute = Object.entries(attrs).map(([name, a]) =>
      "int" in a
        ? { name, type: ATTR.INT, i: a.int }
        : "float" in a
          ? { name, type: ATTR.FLOAT, f: a.float }
          : { name, type: ATTR.INTS, ints: a.ints },
    );
    this.nodes.push({ op_type: opType, name: `n${this.nodes.length}`, input: inputs, output: outs, attribute });
    return outs;
  }

  /** One-output shorthand. */
  op1(opType: string, inputs: string[], attrs: Record<string, Attr> = {}, output?: string): string {
    return this.op(opType, inputs, attrs, output ? [output] : 1)[0]!;
  }

  /** Serialised ModelProto (IR version 8, default-domain opset 17). */
  build(name: string, opset = 17): Uint8Array {
    const model = {
      ir_version: 8,
      producer_name: "batchwise-bench",
      opset_import: [{ domain: "", version: opset }],
      graph: { name, node: this.nodes, initializer: this.initializers, input: this.inputs, output: this.outputs },
    };
    const err = ModelProto.verify(model);
    if (err) throw new Error(`onnx model ${name}: ${err}`);
    return ModelProto.encode(ModelProto.fromObject(model)).finish();
  }
}
