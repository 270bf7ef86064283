/* tslint:disable */
/* eslint-disable */

/**
 * An archive open for reading.
 */
export class Archive {
    private constructor();
    free(): void;
    [Symbol.dispose](): void;
    /**
     * An archive of `length` bytes read by ranges, `head_window` bytes at
     * a time while locating messages.
     */
    static byRanges(length: number, head_window: number): Archive;
    /**
     * Object `object` of message `message`, decoded: its elements' bytes
     * in little-endian order.
     */
    decodeObject(message: number, object: number): Uint8Array;
    /**
     * Element ranges of an object, given as `[first, count, first,
     * count, …]`: one byte array per range.
     */
    decodeRange(message: number, object: number, ranges: Float64Array | number[]): Uint8Array[];
    /**
     * The message's object descriptors as JSON text (an array).
     */
    descriptorsJson(message: number): string;
    /**
     * An archive whose bytes are all in `bytes` (copied into WebAssembly
     * memory once).
     */
    static fromBytes(bytes: Uint8Array | number[]): Archive;
    /**
     * Where the rows and columns of object `object` lie, as JSON text:
     * `{"latitudes": […], "longitudes": […]}` in stored order when its
     * metadata has a `geography` map of a regular grid (the library's
     * rule, `tgm::view::regular_axes`), else `null`.
     */
    gridAxesJson(message: number, object: number): string;
    /**
     * Bytes fetched and kept so far (archives read by ranges).
     */
    held(): number;
    /**
     * The number of messages.
     */
    messageCount(): number;
    /**
     * The message's metadata as JSON text.
     */
    metadataJson(message: number): string;
    /**
     * The byte ranges the last operation needed, as `[start, end, …]`;
     * empty when it answered.
     */
    needed(): Float64Array;
    /**
     * Keeps `bytes` fetched from `offset` (archives read by ranges).
     */
    supply(offset: number, bytes: Uint8Array | number[]): void;
    /**
     * The dataset view of the message's objects as JSON text (an array,
     * one entry per object: name, dimensions, stacking keys with times
     * and levels, attributes, voxel geometry), the library's rule
     * (`tgm::view::message_view_json`, `spec/kerchunk.md` §2.2).
     */
    viewJson(message: number): string;
}

/**
 * The colour map `name` (viridis, cividis, rdbu): 256 entries of red,
 * green, blue bytes.
 */
export function colormap(name: string): Uint8Array;

export type InitInput = RequestInfo | URL | Response | BufferSource | WebAssembly.Module;

export interface InitOutput {
    readonly memory: WebAssembly.Memory;
    readonly __wbg_archive_free: (a: number, b: number) => void;
    readonly archive_byRanges: (a: number, b: number) => [number, number, number];
    readonly archive_decodeObject: (a: number, b: number, c: number) => [number, number, number, number];
    readonly archive_decodeRange: (a: number, b: number, c: number, d: number, e: number) => [number, number, number, number];
    readonly archive_descriptorsJson: (a: number, b: number) => [number, number, number, number];
    readonly archive_fromBytes: (a: number, b: number) => number;
    readonly archive_gridAxesJson: (a: number, b: number, c: number) => [number, number, number, number];
    readonly archive_held: (a: number) => number;
    readonly archive_messageCount: (a: number) => [number, number, number];
    readonly archive_metadataJson: (a: number, b: number) => [number, number, number, number];
    readonly archive_needed: (a: number) => [number, number];
    readonly archive_supply: (a: number, b: number, c: number, d: number) => [number, number];
    readonly archive_viewJson: (a: number, b: number) => [number, number, number, number];
    readonly colormap: (a: number, b: number) => [number, number, number, number];
    readonly __wbindgen_externrefs: WebAssembly.Table;
    readonly __externref_table_dealloc: (a: number) => void;
    readonly __wbindgen_free: (a: number, b: number, c: number) => void;
    readonly __wbindgen_malloc: (a: number, b: number) => number;
    readonly __externref_drop_slice: (a: number, b: number) => void;
    readonly __wbindgen_realloc: (a: number, b: number, c: number, d: number) => number;
    readonly __wbindgen_start: () => void;
}

export type SyncInitInput = BufferSource | WebAssembly.Module;

/**
 * Instantiates the given `module`, which can either be bytes or
 * a precompiled `WebAssembly.Module`.
 *
 * @param {{ module: SyncInitInput }} module - Passing `SyncInitInput` directly is deprecated.
 *
 * @returns {InitOutput}
 */
export function initSync(module: { module: SyncInitInput } | SyncInitInput): InitOutput;

/**
 * If `module_or_path` is {RequestInfo} or {URL}, makes a request and
 * for everything else, calls `WebAssembly.instantiate` directly.
 *
 * @param {{ module_or_path: InitInput | Promise<InitInput> }} module_or_path - Passing `InitInput` directly is deprecated.
 *
 * @returns {Promise<InitOutput>}
 */
export default function __wbg_init (module_or_path?: { module_or_path: InitInput | Promise<InitInput> } | InitInput | Promise<InitInput>): Promise<InitOutput>;
