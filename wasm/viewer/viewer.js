// The tgm viewer page (spec/wasm.md §4): messages and objects of an
// archive, the selected 2-D field drawn with a colour map and colour bar,
// zoom and pan, sliders over messages and slices, the value under the
// cursor. Everything is decoded in the browser by the WebAssembly reader.
import { init, TgmArchive, colormap } from "../pkg/tgm.js";

const $ = (id) => document.getElementById(id);

const state = {
  archive: null,
  messages: [], // { metadata, descriptors } per message
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

/** A short name for object `o` of a message, from its metadata. */
function labelOf(meta, o) {
  const b = meta?.base?.[o] ?? {};
  const pick = (...keys) => keys.map((k) => k.split(".").reduce((v, p) => v?.[p], b)).find((v) => v !== undefined && typeof v !== "object");
  const name = pick("name", "mars.param", "param", "variable", "long_name", "SeriesDescription", "description");
  const level = pick("mars.levelist", "level", "levelist");
  const when = pick("mars.date", "date", "time", "valid_time");
  const step = pick("mars.step", "step");
  return [name, level !== undefined ? `level ${level}` : null, when, step !== undefined ? `step ${step}` : null]
    .filter((x) => x !== undefined && x !== null)
    .join(" · ");
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
      const name = labelOf(msg.metadata, o) || `object ${o}`;
      row.textContent = `${o}: ${name} — ${d.dtype} [${d.shape.join("×")}] ${pipelineOf(d)}`;
      row.title = row.textContent;
      row.addEventListener("click", () => select(m, o).catch(fail));
      nav.append(row);
    });
  });
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
  if (!state.image) return;
  ctx.imageSmoothingEnabled = false;
  const { scale, x, y } = state.view;
  ctx.drawImage(state.image, x, y, state.nx * scale, state.ny * scale);
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
  const msg = state.messages[state.m];
  const d = msg.descriptors[state.o];
  $("title").textContent = `message ${state.m}, object ${state.o}: ${labelOf(msg.metadata, state.o) || d.type}` + (state.slices > 1 ? ` — slice ${state.slice}` : "");
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
  const slider = $("slice-slider");
  slider.max = String(state.slices - 1);
  slider.value = String(state.slice);
  $("message-slider").value = String(m);
  $("message-out").textContent = `${m + 1}/${state.messages.length}`;
  $("meta").textContent = JSON.stringify({ metadata: msg.metadata?.base?.[o] ?? {}, descriptor: d }, null, 1);
  const refit = !state.image || state.image.width !== state.nx || state.image.height !== state.ny;
  repaint();
  if (refit) fit();
  renderList();
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
    const [metadata, descriptors] = [await archive.metadata(m), await archive.descriptors(m)];
    state.messages.push({ metadata, descriptors });
  }
  $("message-slider").max = String(Math.max(0, n - 1));
  renderList();
  if (n === 0) throw new Error("the archive holds no messages");
  await select(0, 0);
}

function gridAt(px, py) {
  const { scale, x, y } = state.view;
  return [Math.floor((py - y) / scale), Math.floor((px - x) / scale)];
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
    $("cursor").textContent = inside ? `row ${i}, column ${j}: ${state.field[i * state.nx + j]}` : "\u00a0";
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
