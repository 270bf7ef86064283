// Shared by the Node tests: the native tgm binary, .npy files, a range
// server on loopback, and the package loaded from wasm/pkg.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, "../..");

/** The native tgm (TGM_BIN, default the debug build of the workspace). */
export const tgmBin = process.env.TGM_BIN ?? path.join(process.env.CARGO_TARGET_DIR ?? path.join(repo, "target"), "debug/tgm");

export function tgm(...args) {
  return execFileSync(tgmBin, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** Loads the generated package (wasm/pkg, made by wasm/build.sh). */
export async function loadPackage() {
  const pkg = path.join(repo, "wasm/pkg");
  const mod = await import(path.join(pkg, "tgm.js"));
  await mod.init(readFileSync(path.join(pkg, "tgm_wasm_bg.wasm")));
  return mod;
}

const DESCR = { float32: "<f4", float64: "<f8", int16: "<i2", uint8: "|u1", int32: "<i4" };

/** Writes a little-endian .npy (format 1.0) of `values` (a typed array) with `shape`. */
export function writeNpy(file, values, dtype, shape) {
  const dict = `{'descr': '${DESCR[dtype]}', 'fortran_order': False, 'shape': (${shape.join(", ")}${shape.length === 1 ? "," : ""}), }`;
  let header = dict + " ".repeat(64 - ((10 + dict.length + 1) % 64)) + "\n";
  const pre = Buffer.alloc(10);
  pre.write("\x93NUMPY", 0, "latin1");
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  writeFileSync(file, Buffer.concat([pre, Buffer.from(header, "latin1"), Buffer.from(values.buffer, values.byteOffset, values.byteLength)]));
}

/** Reads a .npy written by `tgm export`: { descr, shape, bytes }. */
export function readNpy(file) {
  const b = readFileSync(file);
  if (b.toString("latin1", 0, 6) !== "\x93NUMPY") throw new Error(`${file}: not .npy`);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = b.toString("latin1", start, start + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(",").map((s) => s.trim()).filter(Boolean).map(Number);
  return { descr, shape, bytes: new Uint8Array(b.buffer, b.byteOffset + start + hlen, b.length - start - hlen) };
}

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".wasm": "application/wasm", ".json": "application/json" };

/**
 * Serves on 127.0.0.1 what `bytesFor(urlPath)` gives (null: 404),
 * answering single ranges, counting requests; `ranges: false` answers
 * every request whole with 200.
 */
async function serve(bytesFor, { ranges = true } = {}) {
  const log = [];
  const server = createServer((req, res) => {
    const given = new URL(req.url, "http://x").pathname;
    const urlPath = given === "/" ? "/index.html" : given;
    const all = bytesFor(urlPath);
    if (!all) {
      res.writeHead(404);
      return res.end();
    }
    const type = TYPES[path.extname(urlPath)] ?? "application/octet-stream";
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? "");
    log.push(req.headers.range ?? "whole");
    if (!ranges || !m) {
      res.writeHead(200, { "Content-Length": all.length, "Content-Type": type });
      return res.end(all);
    }
    const a = Number(m[1]);
    const b = Math.min(Number(m[2]), all.length - 1);
    if (a >= all.length) {
      res.writeHead(416, { "Content-Range": `bytes */${all.length}` });
      return res.end();
    }
    res.writeHead(206, { "Content-Range": `bytes ${a}-${b}/${all.length}`, "Content-Length": b - a + 1, "Content-Type": type });
    res.end(all.subarray(a, b + 1));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return { origin, log, close: () => new Promise((r) => server.close(r)) };
}

/** Serves the bytes `getBytes()` gives at `/a.tgm` (see `serve`). */
export async function rangeServer(getBytes, options) {
  const s = await serve((p) => (p === "/a.tgm" ? getBytes() : null), options);
  return { ...s, url: `${s.origin}/a.tgm` };
}

/** A static web server of folder `dir` (see `serve`, where `/` is `/index.html`). */
export async function staticServer(dir) {
  const root = path.resolve(dir);
  return serve((p) => {
    const f = path.resolve(root, "." + decodeURIComponent(p));
    if (!f.startsWith(root + path.sep) || !existsSync(f) || !statSync(f).isFile()) return null;
    return readFileSync(f);
  });
}
