/* tslint:disable */
/* eslint-disable */
export const memory: WebAssembly.Memory;
export const __wbg_archive_free: (a: number, b: number) => void;
export const archive_byRanges: (a: number, b: number) => [number, number, number];
export const archive_decodeObject: (a: number, b: number, c: number) => [number, number, number, number];
export const archive_decodeRange: (a: number, b: number, c: number, d: number, e: number) => [number, number, number, number];
export const archive_descriptorsJson: (a: number, b: number) => [number, number, number, number];
export const archive_fromBytes: (a: number, b: number) => number;
export const archive_gridAxesJson: (a: number, b: number, c: number) => [number, number, number, number];
export const archive_held: (a: number) => number;
export const archive_messageCount: (a: number) => [number, number, number];
export const archive_metadataJson: (a: number, b: number) => [number, number, number, number];
export const archive_needed: (a: number) => [number, number];
export const archive_supply: (a: number, b: number, c: number, d: number) => [number, number];
export const archive_viewJson: (a: number, b: number) => [number, number, number, number];
export const colormap: (a: number, b: number) => [number, number, number, number];
export const __wbindgen_externrefs: WebAssembly.Table;
export const __externref_table_dealloc: (a: number) => void;
export const __wbindgen_free: (a: number, b: number, c: number) => void;
export const __wbindgen_malloc: (a: number, b: number) => number;
export const __externref_drop_slice: (a: number, b: number) => void;
export const __wbindgen_realloc: (a: number, b: number, c: number, d: number) => number;
export const __wbindgen_start: () => void;
