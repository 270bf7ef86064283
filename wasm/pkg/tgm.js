// The typed wrapper over the WebAssembly reader (spec/wasm.md): archives
// from bytes or by HTTP range requests, objects as typed arrays.
import wasmInit, { Archive } from "./tgm_wasm.js";

export { colormap } from "./tgm_wasm.js";

let ready = null;

/**
 * Loads the WebAssembly module once: from `source` (bytes, a URL or a
 * Response) or, by default, from tgm_wasm_bg.wasm next to this file.
 */
export function init(source) {
  if (!ready) {
    const module_or_path = source ?? new URL("tgm_wasm_bg.wasm", import.meta.url);
    ready = wasmInit({ module_or_path });
  }
  return ready;
}

/** Bytes read at once while locating messages (spec/remote.md §3). */
export const DEFAULT_HEAD_WINDOW = 64 * 1024;

/** Operations that fetch more than this many times stop: the server is not serving what is asked. */
const MAX_ROUNDS = 1 << 20;

const VIEWS = {
  float32: Float32Array,
  float64: Float64Array,
  complex64: Float32Array,
  complex128: Float64Array,
  int8: Int8Array,
  int16: Int16Array,
  int32: Int32Array,
  int64: BigInt64Array,
  uint8: Uint8Array,
  uint16: Uint16Array,
  uint32: Uint32Array,
  uint64: BigUint64Array,
  bitmask: Uint8Array,
};

/** IEEE binary16 bits to a number. */
function halfToNumber(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

/**
 * Decoded little-endian bytes as the typed array of `dtype`; float16 and
 * bfloat16 widen to Float32Array.
 */
export function typedValues(bytes, dtype) {
  if (dtype === "float16" || dtype === "bfloat16") {
    const u16 = new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
    const out = new Float32Array(u16.length);
    if (dtype === "float16") {
      for (let i = 0; i < u16.length; i++) out[i] = halfToNumber(u16[i]);
    } else {
      const u32 = new Uint32Array(out.buffer);
      for (let i = 0; i < u16.length; i++) u32[i] = u16[i] << 16;
    }
    return out;
  }
  const View = VIEWS[dtype];
  if (!View) throw new Error(`tgm: no typed array for dtype ${dtype}`);
  // A fresh copy is aligned whatever the source's offset.
  const own = bytes.byteOffset % View.BYTES_PER_ELEMENT === 0 ? bytes : bytes.slice();
  return new View(own.buffer, own.byteOffset, own.byteLength / View.BYTES_PER_ELEMENT);
}

/** The archive's length from a 206 response's Content-Range. */
function totalOf(res, url) {
  const cr = res.headers.get("content-range");
  const m = cr && /^bytes \d+-\d+\/(\d+)$/.exec(cr.trim());
  if (!m) throw new Error(`${url}: the server did not answer a range request (status ${res.status}, Content-Range ${cr})`);
  return Number(m[1]);
}

/** A Tensogram archive, in memory or read lazily by HTTP range requests. */
export class TgmArchive {
  #inner;
  #url;
  #fetch;
  #length;
  #etag;
  /** Requests sent and body bytes received (archives read by ranges). */
  stats = { requests: 0, bytes: 0 };

  constructor(inner, url, fetchFn, length, etag) {
    this.#inner = inner;
    this.#url = url;
    this.#fetch = fetchFn;
    this.#length = length;
    this.#etag = etag;
  }

  /** An archive whose bytes are all here. */
  static fromBytes(bytes) {
    const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    return new TgmArchive(Archive.fromBytes(u8), null, null, u8.byteLength, null);
  }

  /**
   * An archive on a web server or object store, read by range requests:
   * the first `headWindow` bytes now (which also give the length), then
   * per operation only the bytes the reader asks for.
   */
  static async open(url, { headWindow = DEFAULT_HEAD_WINDOW, fetch: fetchFn = globalThis.fetch } = {}) {
    const res = await fetchFn(url, { headers: { Range: `bytes=0-${Math.max(headWindow, 1) - 1}` } });
    if (res.status === 416) throw new Error(`${url}: empty (the server refused the first range)`);
    if (res.status !== 206) throw new Error(`${url}: the server did not answer a range request (status ${res.status})`);
    const length = totalOf(res, url);
    const body = new Uint8Array(await res.arrayBuffer());
    const a = new TgmArchive(Archive.byRanges(length, headWindow), url, fetchFn, length, res.headers.get("etag"));
    a.stats.requests = 1;
    a.stats.bytes = body.byteLength;
    a.#inner.supply(0, body);
    return a;
  }

  /** The archive's length in bytes. */
  get length() {
    return this.#length;
  }

  async #fetchRange(start, end) {
    const headers = { Range: `bytes=${start}-${end - 1}` };
    if (this.#etag) headers["If-Match"] = this.#etag;
    // Called unbound: a browser's fetch refuses any `this` but the window.
    const fetchFn = this.#fetch;
    const res = await fetchFn(this.#url, { headers });
    if (res.status === 412) throw new Error(`${this.#url}: the archive changed on the server (ETag no longer ${this.#etag})`);
    if (res.status !== 206) throw new Error(`${this.#url}: range ${start}-${end - 1} answered with status ${res.status}`);
    if (totalOf(res, this.#url) !== this.#length) throw new Error(`${this.#url}: the archive changed on the server (length no longer ${this.#length})`);
    const body = new Uint8Array(await res.arrayBuffer());
    if (body.byteLength !== end - start) throw new Error(`${this.#url}: range ${start}-${end - 1} gave ${body.byteLength} bytes`);
    this.stats.requests += 1;
    this.stats.bytes += body.byteLength;
    this.#inner.supply(start, body);
  }

  /** Runs `op` on the reader, fetching what it needs until it answers. */
  async #run(op) {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      try {
        return op(this.#inner);
      } catch (e) {
        const need = this.#inner.needed();
        if (need.length === 0) throw e;
        const jobs = [];
        for (let i = 0; i < need.length; i += 2) jobs.push(this.#fetchRange(need[i], need[i + 1]));
        await Promise.all(jobs);
      }
    }
    throw new Error(`${this.#url}: no answer after ${MAX_ROUNDS} rounds of range requests`);
  }

  /** The number of messages. */
  messageCount() {
    return this.#run((a) => a.messageCount());
  }

  /** Message metadata (`base`, `_extra_`, …). */
  async metadata(message) {
    return JSON.parse(await this.#run((a) => a.metadataJson(message)));
  }

  /** The message's object descriptors. */
  async descriptors(message) {
    return JSON.parse(await this.#run((a) => a.descriptorsJson(message)));
  }

  /**
   * The dataset view of the message's objects, one entry per object:
   * `{ message, object, name, dims, shape, keys, attrs, valid_time?, geometry? }`
   * (times as ISO 8601 text, `step` in hours, `geometry` the voxel
   * geometry of a medical volume: `{ frame, affine, spacing, origin }`).
   */
  async view(message) {
    return JSON.parse(await this.#run((a) => a.viewJson(message)));
  }

  /**
   * Where the rows and columns of an object lie: `{ latitudes, longitudes }`
   * (degrees, stored order) for a regular latitude-longitude or Gaussian
   * grid described by its `geography` metadata, else `null`.
   */
  async gridAxes(message, object) {
    return JSON.parse(await this.#run((a) => a.gridAxesJson(message, object)));
  }

  /** One object: its descriptor and its values as a typed array. */
  async decodeObject(message, object) {
    const descriptors = await this.descriptors(message);
    const descriptor = descriptors[object];
    if (!descriptor) throw new Error(`message ${message} has no object ${object}`);
    const bytes = await this.#run((a) => a.decodeObject(message, object));
    return { descriptor, values: typedValues(bytes, descriptor.dtype) };
  }

  /** Element ranges `[[first, count], …]` of one object, as typed arrays. */
  async decodeRange(message, object, ranges) {
    const descriptor = (await this.descriptors(message))[object];
    if (!descriptor) throw new Error(`message ${message} has no object ${object}`);
    const flat = new Float64Array(ranges.flat());
    const parts = await this.#run((a) => a.decodeRange(message, object, flat));
    return parts.map((p) => typedValues(p, descriptor.dtype));
  }

  /** A whole message: metadata and every object. */
  async decodeMessage(message) {
    const metadata = await this.metadata(message);
    const descriptors = await this.descriptors(message);
    const objects = [];
    for (let o = 0; o < descriptors.length; o++) objects.push(await this.decodeObject(message, o));
    return { metadata, objects };
  }

  /** Frees the WebAssembly memory the archive holds. */
  free() {
    this.#inner.free();
  }
}
