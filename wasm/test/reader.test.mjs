// The WebAssembly reader decodes what the native tgm writes, with every
// pipeline the browser supports, to the bytes the native tgm exports; from
// memory and lazily by HTTP range requests.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { tgm, loadPackage, writeNpy, readNpy, rangeServer } from "./helpers.mjs";

// Pipelines whose stages all plan element ranges (spec/pipeline.md §7.1);
// decodeRange of the others is refused as natively.
const RANGED = new Set(["raw", "simple_packing16+szip"]);

const PIPELINES = {
  raw: [],
  zstd: ["--compression", "zstd"],
  lz4: ["--compression", "lz4"],
  "shuffle+zstd": ["--filter", "shuffle", "--compression", "zstd"],
  "shuffle+lz4": ["--filter", "shuffle", "--compression", "lz4"],
  "simple_packing16+szip": ["--encoding", "simple_packing", "--bits", "16", "--compression", "szip"],
  "simple_packing24+zstd": ["--encoding", "simple_packing", "--bits", "24", "--compression", "zstd"],
  "simple_packing12+lz4": ["--encoding", "simple_packing", "--bits", "12", "--compression", "lz4"],
  "nan-mask+zstd": ["--allow-nan", "--compression", "zstd"],
};

let dir;
let pkg;

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tgm-wasm-test-"));
  pkg = await loadPackage();
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A 3-message archive (a 2-D float64 field per message) made with `flags`; its native export. */
function make(name, flags) {
  const file = path.join(dir, `${name}.tgm`);
  for (let m = 0; m < 3; m++) {
    const ny = 60;
    const nx = 90;
    const v = new Float64Array(ny * nx);
    for (let i = 0; i < ny; i++) {
      for (let j = 0; j < nx; j++) v[i * nx + j] = 250 + 30 * Math.cos((i / ny) * Math.PI) + 5 * Math.sin(j / 7 + m);
    }
    if (name.startsWith("nan")) v[m * 11 + 5] = NaN;
    const f = path.join(dir, `${name}-${m}.npy`);
    writeNpy(f, v, "float64", [ny, nx]);
    const append = m > 0 ? ["--append"] : [];
    tgm("import", f, "-o", file, ...append, "--meta", "mars.param=2t", "--meta", `mars.step=${m * 6}`, ...flags);
  }
  const out = path.join(dir, `${name}-export`);
  tgm("export", file, "-o", out);
  return { file, out };
}

/** The exported .npy of object `o` of message `m`. */
function exported(out, m, o) {
  const names = readdirSync(out).filter((n) => n.startsWith(`m${m}_`) && n.endsWith(".npy"));
  assert.equal(names.length, 1, `message ${m}: ${names}`);
  assert.equal(o, 0);
  return readNpy(path.join(out, names[0]));
}

for (const [name, flags] of Object.entries(PIPELINES)) {
  test(`${name}: from memory, every message equals the native export`, async () => {
    const { file, out } = make(name, flags);
    const a = pkg.TgmArchive.fromBytes(readFileSync(file));
    assert.equal(await a.messageCount(), 3);
    for (let m = 0; m < 3; m++) {
      const { descriptor, values } = await a.decodeObject(m, 0);
      const want = exported(out, m, 0);
      assert.deepEqual(descriptor.shape, want.shape);
      assert.equal(want.descr, "<f8");
      assert.ok(values instanceof Float64Array);
      assert.deepEqual(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), want.bytes);
    }
    const meta = await a.metadata(2);
    assert.equal(meta.base[0].mars.param, "2t");
    assert.equal(meta.base[0].mars.step, 12);
    a.free();
  });

  test(`${name}: by range requests, one object fetches its frame; element ranges equal the export or are refused`, async () => {
    const { file, out } = make(`${name}-r`, flags);
    const bytes = readFileSync(file);
    const srv = await rangeServer(() => bytes);
    try {
      const a = await pkg.TgmArchive.open(srv.url, { headWindow: 4096 });
      assert.equal(await a.messageCount(), 3);
      const before = a.stats.bytes;
      const { values } = await a.decodeObject(2, 0);
      const want = exported(out, 2, 0);
      assert.deepEqual(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), want.bytes);
      // The third message's frame, not the archive.
      assert.ok(a.stats.bytes - before < bytes.length / 2, `${a.stats.bytes - before} of ${bytes.length} bytes`);
      const ranges = [[10, 5], [4000, 3]];
      if (RANGED.has(name)) {
        const [r1, r2] = await a.decodeRange(1, 0, ranges);
        const all = new Float64Array(exported(out, 1, 0).bytes.slice().buffer);
        assert.deepEqual(Array.from(r1), Array.from(all.subarray(10, 15)));
        assert.deepEqual(Array.from(r2), Array.from(all.subarray(4000, 4003)));
      } else {
        await assert.rejects(a.decodeRange(1, 0, ranges), /range decoding is not possible/);
      }
      a.free();
    } finally {
      await srv.close();
    }
  });
}

test("metadata and descriptors match tgm dump -j", async () => {
  const { file } = make("dump", PIPELINES["simple_packing16+szip"]);
  const doc = JSON.parse(tgm("dump", "-j", file));
  const a = pkg.TgmArchive.fromBytes(readFileSync(file));
  for (let m = 0; m < doc.length; m++) {
    const d = (await a.descriptors(m))[0];
    const native = doc[m].objects[0].descriptor;
    for (const k of ["shape", "dtype", "encoding", "filter", "compression", "bits_per_value"]) {
      assert.deepEqual(d[k], native[k], `message ${m} ${k}`);
    }
    // dump shows an object's metadata without the library's _reserved_ entry.
    const { _reserved_, ...rest } = (await a.metadata(m)).base[0];
    assert.deepEqual(_reserved_.tensor.shape, native.shape);
    assert.deepEqual(rest, doc[m].objects[0].metadata);
  }
});

test("gridAxes places regular and Gaussian grids by their geography metadata", async () => {
  const file = path.join(dir, "grids.tgm");
  const npy = (name, ny, nx) => {
    const f = path.join(dir, `${name}.npy`);
    writeNpy(f, new Float32Array(ny * nx).map((_, i) => i), "float32", [ny, nx]);
    return f;
  };
  const geo = (pairs) => pairs.flatMap(([k, v]) => ["--meta", `geography.${k}=${v}`]);
  tgm("import", npy("ll", 3, 4), "-o", file, ...geo([["gridType", "regular_ll"], ["latitudeOfFirstGridPointInDegrees", -30],
    ["latitudeOfLastGridPointInDegrees", 30], ["longitudeOfFirstGridPointInDegrees", 350], ["iDirectionIncrementInDegrees", 10]]));
  tgm("import", npy("gg", 4, 8), "-o", file, "--append", ...geo([["gridType", "regular_gg"], ["N", 2]]));
  tgm("import", npy("plain", 4, 8), "-o", file, "--append");
  // Described whole: the dataset view's coordinates, as ecCodes steps them across the meridian.
  tgm("import", npy("whole", 3, 4), "-o", file, "--append", ...geo([["gridType", "regular_ll"], ["Ni", 4], ["Nj", 3],
    ["latitudeOfFirstGridPointInDegrees", 30], ["latitudeOfLastGridPointInDegrees", -30],
    ["longitudeOfFirstGridPointInDegrees", 350], ["longitudeOfLastGridPointInDegrees", 20]]));
  const a = pkg.TgmArchive.fromBytes(readFileSync(file));
  assert.deepEqual(await a.gridAxes(0, 0), { latitudes: [-30, 0, 30], longitudes: [350, 360, 370, 380] });
  assert.deepEqual(await a.gridAxes(3, 0), { latitudes: [30, 0, -30], longitudes: [-10, 0, 10, 20] });
  // N = 2: the arcsines of the roots of the Legendre polynomial P4, ±sqrt(3/7 ± 2/7·sqrt(6/5)).
  const root = (s) => (Math.asin(Math.sqrt(3 / 7 + ((s * 2) / 7) * Math.sqrt(6 / 5))) * 180) / Math.PI;
  const gg = await a.gridAxes(1, 0);
  const want = [root(1), root(-1), -root(-1), -root(1)];
  gg.latitudes.forEach((l, k) => assert.ok(Math.abs(l - want[k]) < 1e-9, `${l} ${want[k]}`));
  assert.deepEqual(gg.longitudes, [0, 45, 90, 135, 180, 225, 270, 315]);
  assert.equal(await a.gridAxes(2, 0), null);
  await assert.rejects(a.gridAxes(4, 0), /message|4/);
});

test("view gives the library's dataset view: names, cfgrib times, grid dims, voxel geometry", async () => {
  const file = path.join(dir, "view.tgm");
  const f = path.join(dir, "view-field.npy");
  writeNpy(f, new Float32Array(3 * 4).map((_, i) => i), "float32", [3, 4]);
  const geo = [["gridType", "regular_ll"], ["Ni", 4], ["Nj", 3], ["latitudeOfFirstGridPointInDegrees", 90],
    ["latitudeOfLastGridPointInDegrees", -90], ["longitudeOfFirstGridPointInDegrees", 0], ["longitudeOfLastGridPointInDegrees", 270]];
  tgm("import", f, "-o", file, "--meta", "mars.param=130", "--meta", "mars.date=20240101", "--meta", "mars.time=1200",
    "--meta", "mars.step=6", "--meta", "mars.levelist=500", "--meta", "grib.cfVarName=t", "--meta", "grib.typeOfLevel=isobaricInhPa",
    ...geo.flatMap(([k, v]) => ["--meta", `geography.${k}=${v}`]));
  const vol = path.join(dir, "view-volume.npy");
  writeNpy(vol, new Int16Array(2 * 3 * 4), "int16", [2, 3, 4]);
  tgm("import", vol, "-o", file, "--append", "--meta", "name=brain", "--meta", 'dim_names=["k","j","i"]',
    "--meta", "geometry.affine_lps=[[0.5,0,0,-10],[0,0.75,0,20],[0,0,2.5,30],[0,0,0,1]]");
  const a = pkg.TgmArchive.fromBytes(readFileSync(file));
  const [t] = await a.view(0);
  assert.equal(t.name, "t");
  assert.deepEqual(t.dims, ["latitude", "longitude"]);
  assert.deepEqual(t.shape, [3, 4]);
  assert.deepEqual(t.keys, { isobaricInhPa: 500, step: 6, time: "2024-01-01T12:00:00" });
  assert.equal(t.valid_time, "2024-01-01T18:00:00");
  assert.equal(t.geometry, undefined);
  const [v] = await a.view(1);
  assert.equal(v.name, "brain");
  assert.deepEqual(v.dims, ["k", "j", "i"]);
  assert.deepEqual(v.keys, {});
  assert.deepEqual(v.geometry.spacing, [2.5, 0.75, 0.5]);
  assert.deepEqual(v.geometry.origin, [-10, 20, 30]);
  await assert.rejects(a.view(2), /message|2/);
});

test("a damaged archive is an error naming the cause, also by ranges", async () => {
  const { file } = make("damaged", PIPELINES.zstd);
  const bytes = Buffer.from(readFileSync(file));
  bytes[Math.floor(bytes.length / 2)] ^= 0xff;
  const a = pkg.TgmArchive.fromBytes(bytes);
  await assert.rejects(async () => {
    for (let m = 0; m < (await a.messageCount()); m++) await a.decodeObject(m, 0);
  }, /hash|digest|corrupt|zstd|frame/i);
  const srv = await rangeServer(() => bytes);
  try {
    const r = await pkg.TgmArchive.open(srv.url, { headWindow: 4096 });
    await assert.rejects(async () => {
      for (let m = 0; m < (await r.messageCount()); m++) await r.decodeObject(m, 0);
    }, /hash|digest|corrupt|zstd|frame/i);
  } finally {
    await srv.close();
  }
});

test("a server that ignores Range is refused with a clear error", async () => {
  const { file } = make("norange", []);
  const bytes = readFileSync(file);
  const srv = await rangeServer(() => bytes, { ranges: false });
  try {
    await assert.rejects(pkg.TgmArchive.open(srv.url), /did not answer a range request \(status 200/);
  } finally {
    await srv.close();
  }
});

test("an archive that changes length between requests is refused", async () => {
  const { file } = make("changing", PIPELINES.lz4);
  let bytes = readFileSync(file);
  const srv = await rangeServer(() => bytes);
  try {
    const a = await pkg.TgmArchive.open(srv.url, { headWindow: 64 });
    bytes = Buffer.concat([bytes, bytes]);
    await assert.rejects(async () => {
      await a.messageCount();
      await a.decodeObject(2, 0);
    }, /changed on the server/);
  } finally {
    await srv.close();
  }
});

test("the viridis table runs from #440154 to #fde725", () => {
  const t = pkg.colormap("viridis");
  assert.equal(t.length, 768);
  assert.deepEqual(Array.from(t.subarray(0, 3)), [0x44, 0x01, 0x54]);
  assert.deepEqual(Array.from(t.subarray(765)), [0xfd, 0xe7, 0x25]);
  assert.throws(() => pkg.colormap("jet"), /no colour map/);
});
