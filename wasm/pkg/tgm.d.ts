// Types of the wrapper in tgm.js; the generated tgm_wasm.d.ts types the
// raw bindings underneath.

/** A typed array of an object's elements (float16/bfloat16 widened to float32; complex interleaved). */
export type Values =
  | Float32Array
  | Float64Array
  | Int8Array
  | Int16Array
  | Int32Array
  | BigInt64Array
  | Uint8Array
  | Uint16Array
  | Uint32Array
  | BigUint64Array;

/** An object descriptor as the archive stores it (spec/format.md). */
export interface Descriptor {
  type: string;
  ndim: number;
  shape: number[];
  strides: number[];
  dtype: string;
  byte_order: "big" | "little";
  encoding: string;
  filter: string;
  compression: string;
  masks?: Record<string, { method: string; offset: number; length: number }>;
  [param: string]: unknown;
}

/** Message metadata: `base` (one entry per object), `_extra_`, `_reserved_`. */
export interface Metadata {
  base?: Record<string, unknown>[];
  _extra_?: Record<string, unknown>;
  _reserved_?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Where a medical volume's voxels lie (spec/kerchunk.md §2.2). */
export interface VoxelGeometry {
  frame: "LPS";
  /** Voxel index (i, j, k, 1) to millimetres; i runs along the last axis. */
  affine: number[][];
  /** Millimetres between neighbours along each axis (null before the last three). */
  spacing: (number | null)[];
  /** The position of voxel (0, 0, 0). */
  origin: number[];
}

/** One object in the dataset view (spec/kerchunk.md §2.2). */
export interface ObjectView {
  message: number;
  object: number;
  /** The variable name (cfgrib's `cfVarName`, else `shortName`, `mars.param`, `name`). */
  name: string;
  dims: string[];
  shape: number[];
  /** The keys it is stacked along: `time` as ISO 8601 text, `step` in hours, levels named by type of level. */
  keys: Record<string, string | number>;
  /** `time` + `step` (ISO 8601) when it has both. */
  valid_time?: string;
  attrs: Record<string, unknown>;
  geometry?: VoxelGeometry;
}

export interface DecodedObject {
  descriptor: Descriptor;
  values: Values;
}

export interface OpenOptions {
  /** Bytes read at once while locating messages (default 65536). */
  headWindow?: number;
  /** The fetch to use (default globalThis.fetch). */
  fetch?: typeof fetch;
}

/** Loads the WebAssembly module once (default: tgm_wasm_bg.wasm next to tgm.js). */
export function init(source?: BufferSource | URL | string | Response | WebAssembly.Module): Promise<unknown>;

export const DEFAULT_HEAD_WINDOW: number;

/** A colour map (viridis, cividis, rdbu): 256 × red, green, blue. */
export function colormap(name: string): Uint8Array;

export function typedValues(bytes: Uint8Array, dtype: string): Values;

export class TgmArchive {
  static fromBytes(bytes: ArrayBuffer | Uint8Array): TgmArchive;
  static open(url: string, options?: OpenOptions): Promise<TgmArchive>;
  readonly length: number;
  readonly stats: { requests: number; bytes: number };
  messageCount(): Promise<number>;
  metadata(message: number): Promise<Metadata>;
  descriptors(message: number): Promise<Descriptor[]>;
  view(message: number): Promise<ObjectView[]>;
  gridAxes(message: number, object: number): Promise<{ latitudes: number[]; longitudes: number[] } | null>;
  decodeObject(message: number, object: number): Promise<DecodedObject>;
  decodeRange(message: number, object: number, ranges: [number, number][]): Promise<Values[]>;
  decodeMessage(message: number): Promise<{ metadata: Metadata; objects: DecodedObject[] }>;
  free(): void;
}
