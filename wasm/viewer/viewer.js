// The tgm viewer page (spec/wasm.md §4): messages and objects of an
// archive, the selected 2-D field drawn with a colour map and colour bar,
// zoom and pan, sliders over messages and slices and over the levels,
// times and members of a field, latitude/longitude lines on regular
// grids, the value under the cursor. Everything is decoded in the browser
// by the WebAssembly reader.
import { init, TgmArchive, colormap } from "../pkg/tgm.js";

const $ = (id) => document.getElementById(id);

const state = {
  archive: null,
  messages: [], // { metadata, descriptors, view } per message
  m: 0,
  o: 0,
  slice: 0,
  values: null, // the whole object, as numbers
  field: null, // the drawn slice (Float64Array, ny × nx, row 0 at the top)
  ny: 0,
  nx: 0,
  slices: 1,
  min: 0,
  max: 0,
  lut: null,
  view: { scale: 1, x: 0, y: 0 },
  image: null, // an off-screen canvas of nx × ny pixels
  axes: null, // { latitudes, longitudes } of a regular grid, else null
  fields: [], // per message, per object: { m, o, what, name, keys, geometry } (the library's view)
  quantities: new Map(), // quantity -> its fields
  varying: new Map(), // quantity -> the keys its fields differ in
  graticule: [], // the lines drawn: { kind: "lat" | "lon", deg, at } (canvas pixels)
};

function busy(on) {
  document.body.dataset.state = on ? "loading" : "ready";
  $("loading").textContent = on ? "loading…" : "";
}

function fail(e) {
  const text = e instanceof Error ? e.message : String(e);
  $("error").textContent = text;
  console.error(text);
  document.body.dataset.state = "error";
}

window.addEventListener("error", (e) => fail(e.error ?? e.message));
window.addEventListener("unhandledrejection", (e) => fail(e.reason));

/** A key's value as text: `step 6`, `levelist 850`; a time (ISO 8601) as it is. */
function keyText(key, v) {
  return key === "time" ? String(v) : `${key} ${v}`;
}

/** A short name for field `f`: its variable name, then its values of the keys its quantity varies along. */
function labelOf(f) {
  const parts = [f.name];
  for (const k of state.varying.get(f.what) ?? []) if (f.keys[k] !== undefined) parts.push(keyText(k, f.keys[k]));
  return parts.join(" · ");
}

function pipelineOf(d) {
  return [d.encoding, d.filter, d.compression].filter((s) => s && s !== "none").join("+") || "raw";
}

function renderList() {
  const nav = $("objects");
  nav.replaceChildren();
  state.messages.forEach((msg, m) => {
    const head = document.createElement("div");
    head.className = "message";
    head.textContent = `message ${m}`;
    nav.append(head);
    msg.descriptors.forEach((d, o) => {
      const row = document.createElement("div");
      row.className = "object" + (m === state.m && o === state.o ? " selected" : "");
      row.dataset.message = m;
      row.dataset.object = o;
      const name = labelOf(fieldOf(m, o));
      row.textContent = `${o}: ${name} — ${d.dtype} [${d.shape.join("×")}] ${pipelineOf(d)}`;
      row.title = row.textContent;
      row.addEventListener("click", () => select(m, o).catch(fail));
      nav.append(row);
    });
  });
}

/**
 * Every object as the library's dataset view gives it (spec/kerchunk.md
 * §2.2): a quantity is a variable name and a shape; its keys (times,
 * steps, levels, members, …) tell the fields of a quantity apart. Keys
 * whose values differ between the fields of a quantity are the
 * dimensions it has sliders for.
 */
function catalogue() {
  state.fields = state.messages.map((msg, m) =>
    msg.view.map((v, o) => ({ m, o, what: JSON.stringify([v.name, v.shape]), name: v.name, keys: v.keys, geometry: v.geometry })),
  );
  const byWhat = new Map();
  for (const f of state.fields.flat()) {
    if (!byWhat.has(f.what)) byWhat.set(f.what, []);
    byWhat.get(f.what).push(f);
  }
  state.quantities = byWhat;
  state.varying = new Map();
  for (const [what, fs] of byWhat) {
    const keys = new Set(fs.flatMap((f) => Object.keys(f.keys)));
    const differ = (k) => new Set(fs.map((f) => JSON.stringify(f.keys[k] ?? null))).size > 1;
    state.varying.set(what, [...keys].filter(differ).sort());
  }
}

/** The field of object `o` of message `m`, found without a search. */
function fieldOf(m, o) {
  return state.fields[m]?.[o];
}

/** Orders key values: missing first, numbers (or numeric text) by value, then text. */
export function compareDim(x, y) {
  if (x === y) return 0;
  if (x === undefined || x === null) return -1;
  if (y === undefined || y === null) return 1;
  const [nx, ny] = [Number(x), Number(y)];
  if (Number.isFinite(nx) && Number.isFinite(ny) && nx !== ny) return nx - ny;
  return String(x).localeCompare(String(y));
}

/**
 * For key `d` of field `f`: the fields of the same quantity that differ
 * from it in `d` alone, one per value, in order.
 */
export function alongDim(fields, f, d) {
  const others = (g) => new Set([...Object.keys(f.keys), ...Object.keys(g.keys)].filter((k) => k !== d));
  const same = fields.filter((g) => g.what === f.what && [...others(g)].every((k) => compareDim(g.keys[k], f.keys[k]) === 0));
  const out = [];
  for (const g of same.sort((a, b) => compareDim(a.keys[d], b.keys[d]))) {
    if (!out.length || compareDim(out[out.length - 1].keys[d], g.keys[d]) !== 0) out.push(g);
  }
  return out;
}

/**
 * One slider per key along which the selected field has neighbours;
 * sliders over the same fields as before are moved, not rebuilt, so that
 * one being dragged stays under the pointer.
 */
function renderDims() {
  const box = $("dims");
  const f = fieldOf(state.m, state.o);
  const rows = [];
  for (const d of f ? state.varying.get(f.what) ?? [] : []) {
    const along = alongDim(state.quantities.get(f.what), f, d);
    if (along.length > 1) rows.push({ d, along, at: along.findIndex((g) => g.m === f.m && g.o === f.o) });
  }
  const signature = JSON.stringify(rows.map((r) => [r.d, r.along.map((g) => [g.m, g.o])]));
  if (box.dataset.signature !== signature) {
    box.replaceChildren();
    box.dataset.signature = signature;
    for (const { d, along } of rows) {
      const label = document.createElement("label");
      const input = Object.assign(document.createElement("input"), { type: "range", id: `dim-${d}`, min: "0", max: String(along.length - 1) });
      const out = Object.assign(document.createElement("output"), { id: `dim-${d}-out` });
      input.addEventListener("input", () => {
        const g = along[Number(input.value)];
        out.textContent = String(g.keys[d]);
        select(g.m, g.o).catch(fail);
      });
      label.append(`${d} `, input, " ", out);
      box.append(label);
    }
  }
  for (const { d, along, at } of rows) {
    $(`dim-${d}`).value = String(at);
    $(`dim-${d}-out`).textContent = String(along[at].keys[d]);
  }
}

function asNumbers(values, dtype) {
  const complex = dtype === "complex64" || dtype === "complex128";
  const n = complex ? values.length / 2 : values.length;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = Number(values[complex ? 2 * i : i]);
  return out;
}

function cutSlice() {
  const per = state.ny * state.nx;
  state.field = state.values.subarray(state.slice * per, (state.slice + 1) * per);
  let min = Infinity;
  let max = -Infinity;
  for (const v of state.field) {
    if (Number.isFinite(v)) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
  }
  state.min = min === Infinity ? 0 : min;
  state.max = max === -Infinity ? 0 : max;
}

/** The colour table index of `v` in the current range. */
export function colourIndex(v, min, max) {
  if (!(max > min)) return 0;
  return Math.min(255, Math.max(0, Math.floor(((v - min) / (max - min)) * 256)));
}

function paintImage() {
  const { nx, ny, field, lut, min, max } = state;
  const img = document.createElement("canvas");
  img.width = nx;
  img.height = ny;
  const ctx = img.getContext("2d");
  const data = ctx.createImageData(nx, ny);
  for (let i = 0; i < field.length; i++) {
    const v = field[i];
    if (Number.isNaN(v)) continue; // transparent
    const k = colourIndex(v, min, max) * 3;
    data.data.set([lut[k], lut[k + 1], lut[k + 2], 255], i * 4);
  }
  ctx.putImageData(data, 0, 0);
  state.image = img;
}

function paintBar() {
  const bar = $("colorbar");
  const ctx = bar.getContext("2d");
  const h = bar.height;
  for (let y = 0; y < h; y++) {
    const k = Math.min(255, Math.floor(((h - 1 - y) / h) * 256)) * 3;
    ctx.fillStyle = `rgb(${state.lut[k]},${state.lut[k + 1]},${state.lut[k + 2]})`;
    ctx.fillRect(0, y, bar.width, 1);
  }
  $("bar-max").textContent = state.max.toPrecision(5);
  $("bar-min").textContent = state.min.toPrecision(5);
}

function draw() {
  const c = $("field");
  const ctx = c.getContext("2d");
  ctx.clearRect(0, 0, c.width, c.height);
  drawGraticule();
  if (!state.image) return;
  ctx.imageSmoothingEnabled = false;
  const { scale, x, y } = state.view;
  ctx.drawImage(state.image, x, y, state.nx * scale, state.ny * scale);
}

/** The fractional index where `v` falls in the monotonic `list`, or null outside it. */
export function fractionalIndex(list, v) {
  for (let k = 0; k + 1 < list.length; k++) {
    const [a, b] = [list[k], list[k + 1]];
    if ((a <= v && v <= b) || (b <= v && v <= a)) return a === b ? k : k + (v - a) / (b - a);
  }
  return list.length === 1 && list[0] === v ? 0 : null;
}

/** A longitude in (−180, 180]. */
function wrapLon(l) {
  const n = (((l % 360) + 360) % 360);
  return n > 180 ? n - 360 : n;
}

export function formatLat(l) {
  return `${Math.abs(l).toFixed(2)}°${l < 0 ? "S" : "N"}`;
}

export function formatLon(l) {
  const w = wrapLon(l);
  return `${Math.abs(w).toFixed(2)}°${w < 0 ? "W" : "E"}`;
}

/** A graticule line's label: 30°N, 0°, 45°W, 180°. */
function lineLabel(kind, deg) {
  const v = kind === "lat" ? deg : wrapLon(deg);
  const hemisphere = v === 0 || (kind === "lon" && v === 180) ? "" : kind === "lat" ? (v < 0 ? "S" : "N") : v < 0 ? "W" : "E";
  return `${+Math.abs(v).toFixed(2)}°${hemisphere}`;
}

/** Spacing of the graticule: lines about every 80 pixels. */
function lineStep(degreesPerPixel) {
  return [0.1, 0.25, 0.5, 1, 2, 5, 10, 15, 30, 45, 90].find((s) => s >= 80 * degreesPerPixel) ?? 90;
}

/** Latitude and longitude lines over the field, with their labels, on the overlay canvas. */
function drawGraticule() {
  const c = $("grid");
  const ctx = c.getContext("2d");
  ctx.clearRect(0, 0, c.width, c.height);
  state.graticule = [];
  const axes = state.axes;
  if (!axes || !state.image) return;
  const { latitudes: lats, longitudes: lons } = axes;
  const { scale, x, y } = state.view;
  const left = Math.max(0, x);
  const right = Math.min(c.width, x + state.nx * scale);
  const top = Math.max(0, y);
  const bottom = Math.min(c.height, y + state.ny * scale);
  if (right <= left || bottom <= top) return;
  const latSpan = Math.abs(lats[lats.length - 1] - lats[0]) / Math.max(1, lats.length - 1);
  const lonStep = lons.length > 1 ? lons[1] - lons[0] : 360;
  const lines = [];
  const dLat = lineStep(latSpan / scale);
  // Degrees as whole multiples of the spacing, so that 0.1° steps add no rounding.
  const multiples = (from, to, step) => {
    const out = [];
    for (let k = Math.ceil(from / step - 1e-9); k * step <= to + 1e-9; k++) out.push(+(k * step).toFixed(6));
    return out;
  };
  for (const deg of multiples(-90, 90, dLat)) {
    const r = fractionalIndex(lats, deg);
    if (r === null) continue;
    const at = y + (r + 0.5) * scale;
    if (at >= top && at <= bottom) lines.push({ kind: "lat", deg, at });
  }
  const dLon = lineStep(Math.abs(lonStep) / scale);
  const lo = Math.min(lons[0], lons[lons.length - 1]);
  const hi = Math.max(lons[0], lons[lons.length - 1]);
  for (const deg of multiples(lo, hi, dLon)) {
    const col = (deg - lons[0]) / lonStep;
    const at = x + (col + 0.5) * scale;
    if (at >= left && at <= right) lines.push({ kind: "lon", deg, at });
  }
  ctx.strokeStyle = "rgba(255, 255, 255, 0.7)";
  ctx.lineWidth = 1;
  ctx.font = "11px system-ui, sans-serif";
  ctx.fillStyle = "#fff";
  ctx.beginPath();
  for (const l of lines) {
    const p = Math.floor(l.at) + 0.5;
    if (l.kind === "lat") {
      ctx.moveTo(left, p);
      ctx.lineTo(right, p);
    } else {
      ctx.moveTo(p, top);
      ctx.lineTo(p, bottom);
    }
  }
  ctx.stroke();
  ctx.lineWidth = 3;
  ctx.strokeStyle = "rgba(0, 0, 0, 0.6)";
  for (const l of lines) {
    // Latitudes on the left edge, longitudes along the bottom; none in the corner they share.
    const [tx, ty] = l.kind === "lat" ? [left + 3, l.at - 3] : [l.at + 3, bottom - 4];
    if ((l.kind === "lat" && ty > bottom - 16) || (l.kind === "lon" && tx < left + 40)) continue;
    const text = lineLabel(l.kind, l.deg);
    ctx.strokeText(text, tx, ty);
    ctx.fillText(text, tx, ty);
  }
  state.graticule = lines;
}

function fit() {
  const c = $("field");
  const scale = Math.min(c.width / state.nx, c.height / state.ny);
  state.view = { scale, x: (c.width - state.nx * scale) / 2, y: (c.height - state.ny * scale) / 2 };
  draw();
}

function repaint() {
  cutSlice();
  paintImage();
  paintBar();
  draw();
  const f = fieldOf(state.m, state.o);
  $("title").textContent = `message ${state.m}, object ${state.o}: ${labelOf(f)}` + (state.slices > 1 ? ` — slice ${state.slice}` : "");
  $("slice-out").textContent = `${state.slice + 1}/${state.slices}`;
}

async function select(m, o) {
  busy(true);
  const msg = state.messages[m];
  const d = msg.descriptors[o];
  const { values } = await state.archive.decodeObject(m, o);
  const shape = d.shape.length === 0 ? [1] : d.shape;
  state.m = m;
  state.o = o;
  state.nx = shape[shape.length - 1];
  state.ny = shape.length > 1 ? shape[shape.length - 2] : 1;
  state.slices = shape.slice(0, -2).reduce((a, b) => a * b, 1);
  state.slice = Math.min(state.slice, state.slices - 1);
  state.values = asNumbers(values, d.dtype);
  state.axes = await state.archive.gridAxes(m, o);
  const slider = $("slice-slider");
  slider.max = String(state.slices - 1);
  slider.value = String(state.slice);
  $("message-slider").value = String(m);
  $("message-out").textContent = `${m + 1}/${state.messages.length}`;
  $("meta").textContent = JSON.stringify({ view: msg.view[o], metadata: msg.metadata?.base?.[o] ?? {}, descriptor: d }, null, 1);
  const refit = !state.image || state.image.width !== state.nx || state.image.height !== state.ny;
  repaint();
  if (refit) fit();
  else draw();
  renderList();
  renderDims();
  busy(false);
}

async function openArchive(archive) {
  busy(true);
  $("error").textContent = "";
  state.archive = archive;
  state.messages = [];
  state.image = null;
  const n = await archive.messageCount();
  for (let m = 0; m < n; m++) {
    const [metadata, descriptors, view] = [await archive.metadata(m), await archive.descriptors(m), await archive.view(m)];
    state.messages.push({ metadata, descriptors, view });
  }
  $("message-slider").max = String(Math.max(0, n - 1));
  catalogue();
  renderList();
  if (n === 0) throw new Error("the archive holds no messages");
  await select(0, 0);
}

function gridAt(px, py) {
  const { scale, x, y } = state.view;
  return [Math.floor((py - y) / scale), Math.floor((px - x) / scale)];
}

/** Latitude and longitude of grid point (i, j) of a regular grid, else null. */
function latLonAt(i, j) {
  const a = state.axes;
  return a && i < a.latitudes.length && j < a.longitudes.length ? [a.latitudes[i], a.longitudes[j]] : null;
}

/**
 * Where voxel (row i, column j) of the drawn slice lies in the patient
 * (LPS millimetres), for a medical volume whose view has a geometry: the
 * library's affine applied to (column, row, slice), else null.
 */
function patientAt(i, j) {
  const f = fieldOf(state.m, state.o);
  const a = f?.geometry?.affine;
  if (!a) return null;
  const shape = state.messages[state.m].descriptors[state.o].shape;
  const k = shape.length >= 3 ? state.slice % shape[shape.length - 3] : 0;
  return [0, 1, 2].map((r) => a[r][0] * j + a[r][1] * i + a[r][2] * k + a[r][3]);
}

function cursorText(i, j) {
  const where = latLonAt(i, j);
  const mm = patientAt(i, j);
  const place = where
    ? `, ${formatLat(where[0])} ${formatLon(where[1])}`
    : mm
      ? `, LPS (${mm.map((x) => x.toFixed(1)).join(", ")}) mm`
      : "";
  return `row ${i}, column ${j}${place}: ${state.field[i * state.nx + j]}`;
}

function wireCanvas() {
  const c = $("field");
  let drag = null;
  c.addEventListener("pointerdown", (e) => {
    drag = { x: e.offsetX, y: e.offsetY };
    c.setPointerCapture(e.pointerId);
  });
  c.addEventListener("pointerup", () => (drag = null));
  c.addEventListener("pointermove", (e) => {
    if (drag) {
      state.view.x += e.offsetX - drag.x;
      state.view.y += e.offsetY - drag.y;
      drag = { x: e.offsetX, y: e.offsetY };
      draw();
    }
    if (!state.field) return;
    const [i, j] = gridAt(e.offsetX, e.offsetY);
    const inside = i >= 0 && j >= 0 && i < state.ny && j < state.nx;
    $("cursor").textContent = inside ? cursorText(i, j) : "\u00a0";
  });
  c.addEventListener(
    "wheel",
    (e) => {
      e.preventDefault();
      const f = Math.exp(-e.deltaY / 500);
      const v = state.view;
      v.x = e.offsetX - (e.offsetX - v.x) * f;
      v.y = e.offsetY - (e.offsetY - v.y) * f;
      v.scale *= f;
      draw();
    },
    { passive: false },
  );
}

function wireControls() {
  $("reset").addEventListener("click", fit);
  $("slice-slider").addEventListener("input", (e) => {
    state.slice = Number(e.target.value);
    repaint();
  });
  $("message-slider").addEventListener("input", (e) => {
    const m = Number(e.target.value);
    const o = Math.min(state.o, state.messages[m].descriptors.length - 1);
    select(m, o).catch(fail);
  });
  $("cmap").addEventListener("change", (e) => {
    state.lut = colormap(e.target.value);
    repaint();
  });
  $("archive").addEventListener("change", (e) => TgmArchive.open(e.target.value).then(openArchive).catch(fail));
  $("url").addEventListener("change", (e) => TgmArchive.open(e.target.value).then(openArchive).catch(fail));
  $("file").addEventListener("change", async (e) => {
    const f = e.target.files[0];
    if (f) await openArchive(TgmArchive.fromBytes(await f.arrayBuffer())).catch(fail);
  });
}

/** For tests and scripts: where grid point (i, j) of the drawn slice is on the canvas, and its value. */
window.tgmViewer = {
  state,
  colourIndex,
  gridToCanvas: (i, j) => ({
    x: Math.floor(state.view.x + (j + 0.5) * state.view.scale),
    y: Math.floor(state.view.y + (i + 0.5) * state.view.scale),
  }),
  valueAt: (i, j) => state.field[i * state.nx + j],
  latLonAt,
  patientAt,
  cursorText,
};

async function main() {
  busy(true);
  await init();
  state.lut = colormap("viridis");
  wireCanvas();
  wireControls();
  const list = await fetch("archives.json").then((r) => (r.ok ? r.json() : []));
  for (const a of list) $("archive").append(new Option(a.name, a.url));
  const first = new URLSearchParams(location.search).get("url") ?? list[0]?.url;
  if (first) await openArchive(await TgmArchive.open(first));
  else busy(false);
}

main().catch(fail);
