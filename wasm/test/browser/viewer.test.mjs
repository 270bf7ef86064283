// tgm view in headless Chromium (Debian's, through the DevTools protocol
// with puppeteer-core): on an ERA5-like archive made with tgm, the object
// list appears, pixels at known grid points have the colour the colour map
// gives their known values, the sliders move over messages, slices and the
// fields' levels, times and members, latitude/longitude lines lie on the
// grid rows and columns of their degrees, the value under the pointer
// names its place, and nothing is logged as an error. Writes a screenshot and prints the
// browser's decode speed.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import puppeteer from "puppeteer-core";
import { tgm, tgmBin, loadPackage, writeNpy, repo, staticServer } from "../helpers.mjs";

const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const SCREENSHOT = process.env.VIEWER_SCREENSHOT ?? path.join(repo, "target/viewer.png");
const NY = 181; // 1° ERA5-like grid, 90N..90S
const NX = 360; // 0..359E
const STEPS = [0, 6, 12, 18];
const LEVELS = [850, 500, 250];
/** The 1° grid as convert-grib describes it (spec/plot.md §3). */
const GEOGRAPHY = {
  gridType: "regular_ll",
  latitudeOfFirstGridPointInDegrees: 90,
  latitudeOfLastGridPointInDegrees: -90,
  longitudeOfFirstGridPointInDegrees: 0,
  longitudeOfLastGridPointInDegrees: 359,
  iDirectionIncrementInDegrees: 1,
  jDirectionIncrementInDegrees: 1,
};
const GEO_META = Object.entries(GEOGRAPHY).flatMap(([k, v]) => ["--meta", `geography.${k}=${v}`]);
/** Specific humidity on two levels for two ensemble members: messages 6 to 9. */
const Q = [[850, 0], [500, 0], [850, 1], [500, 1]];

/** 2 m temperature in kelvin at grid point (i, j), as float32. */
function t2m(i, j, step) {
  const lat = ((90 - i) * Math.PI) / 180;
  const lon = (j * Math.PI) / 180;
  return Math.fround(300 - 45 * Math.sin(lat) ** 2 + 8 * Math.cos(lon + step / 4) * Math.cos(lat));
}

/** Temperature on pressure level k. */
function t3d(k, i, j) {
  return Math.fround(t2m(i, j, 0) - 25 * (k + 1) + ((i * j) % 7));
}

function field(f) {
  const v = new Float32Array(NY * NX);
  for (let i = 0; i < NY; i++) for (let j = 0; j < NX; j++) v[i * NX + j] = f(i, j);
  return v;
}

let dir;
let server;
let browser;
let viewerUrl;
let lut;
let era5;

function expectedColour(values, i, j) {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    min = Math.min(min, v);
    max = Math.max(max, v);
  }
  const v = values[i * NX + j];
  const k = Math.min(255, Math.floor(((v - min) / (max - min)) * 256));
  return [lut[3 * k], lut[3 * k + 1], lut[3 * k + 2], 255];
}

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tgm-viewer-test-"));
  lut = (await loadPackage()).colormap("viridis");
  era5 = path.join(dir, "era5.tgm");
  STEPS.forEach((s, m) => {
    const f = path.join(dir, `2t-${s}.npy`);
    writeNpy(f, field((i, j) => t2m(i, j, s)), "float32", [NY, NX]);
    tgm("import", f, "-o", era5, ...(m > 0 ? ["--append"] : []), "--meta", "mars.param=2t",
      "--meta", "mars.date=20240101", "--meta", `mars.step=${s}`, ...GEO_META, "--filter", "shuffle", "--compression", "zstd");
  });
  const vol = new Float32Array(LEVELS.length * NY * NX);
  LEVELS.forEach((_, k) => vol.set(field((i, j) => t3d(k, i, j)), k * NY * NX));
  const vf = path.join(dir, "t.npy");
  writeNpy(vf, vol, "float32", [LEVELS.length, NY, NX]);
  tgm("import", vf, "-o", era5, "--append", "--meta", "mars.param=t", "--compression", "lz4");
  // An ERA5 0.25° field for the decode speed, packed as ERA5's GRIB is.
  const big = new Float64Array(721 * 1440);
  for (let i = 0; i < big.length; i++) big[i] = 250 + 40 * Math.sin(i / 1e4) + (i % 13) * 0.1;
  const bf = path.join(dir, "big.npy");
  writeNpy(bf, big, "float64", [721, 1440]);
  tgm("import", bf, "-o", era5, "--append", "--meta", "mars.param=msl",
    "--encoding", "simple_packing", "--bits", "16", "--compression", "szip");
  Q.forEach(([level, member], k) => {
    const f = path.join(dir, `q-${k}.npy`);
    writeNpy(f, new Float32Array(12 * 24).map((_, i) => i + 1000 * k), "float32", [12, 24]);
    tgm("import", f, "-o", era5, "--append", "--meta", "mars.param=q", "--meta", `mars.levelist=${level}`, "--meta", `mars.number=${member}`);
  });

  // A medical volume (message 10): 2 slices of 4 × 5 voxels, 0.5 × 0.75 mm, 2.5 mm apart.
  const mf = path.join(dir, "volume.npy");
  writeNpy(mf, new Float32Array(2 * 4 * 5).map((_, i) => i), "float32", [2, 4, 5]);
  tgm("import", mf, "-o", era5, "--append", "--meta", "name=brain", "--meta", 'dim_names=["k","j","i"]',
    "--meta", "geometry.affine_lps=[[0.5,0,0,-10],[0,0.75,0,20],[0,0,2.5,30],[0,0,0,1]]");

  server = spawn(tgmBin, ["view", era5, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  viewerUrl = await new Promise((resolve, reject) => {
    let out = "";
    server.stdout.on("data", (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) resolve(m[1]);
    });
    server.on("exit", (c) => reject(new Error(`tgm view exited with ${c}: ${out}`)));
  });
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--window-size=1500,700"],
    defaultViewport: { width: 1500, height: 640 },
  });
});

after(async () => {
  await browser?.close();
  server?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function ready(page) {
  await page.waitForFunction(() => ["ready", "error"].includes(document.body.dataset.state), { timeout: 60_000 });
  const err = await page.$eval("#error", (e) => e.textContent);
  assert.equal(err, "", "the page reports an error");
}

async function pixelAt(page, i, j) {
  return page.evaluate(
    (i, j) => {
      const { x, y } = window.tgmViewer.gridToCanvas(i, j);
      return Array.from(document.getElementById("field").getContext("2d").getImageData(x, y, 1, 1).data);
    },
    i,
    j,
  );
}

const POINTS = [[0, 0], [45, 90], [90, 180], [120, 33], [180, 359], [17, 301]];

/** A page whose console errors, page errors, failed requests and HTTP errors land in `problems`. */
async function watchedPage() {
  const page = await browser.newPage();
  const problems = [];
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`page: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));
  page.on("response", (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()}: ${r.url()}`));
  return { page, problems };
}

test("tgm view in Chromium: object list, colours at known grid points, sliders, no console error", async () => {
  const { page, problems } = await watchedPage();
  await page.goto(viewerUrl, { waitUntil: "load" });
  await ready(page);

  const rows = await page.$$eval("nav .object", (els) => els.map((e) => e.textContent));
  assert.equal(rows.length, STEPS.length + 2 + Q.length + 1, rows.join("\n"));
  assert.match(rows[0], /2t/);
  assert.match(rows[0], /float32 \[181×360\]/);
  assert.match(rows[4], /t\b.*\[3×181×360\]/);

  // Message 0, step 0: colours and values under the known grid points.
  const step0 = field((i, j) => t2m(i, j, 0));
  for (const [i, j] of POINTS) {
    assert.equal(await page.evaluate((i, j) => window.tgmViewer.valueAt(i, j), i, j), step0[i * NX + j]);
    assert.deepEqual(await pixelAt(page, i, j), expectedColour(step0, i, j), `grid point ${i},${j}`);
  }

  // Latitude/longitude lines of the regular 1° grid: each lies on the row
  // or column of its degrees, and the overlay is empty between lines.
  const lines = await page.evaluate(() => window.tgmViewer.state.graticule);
  const lats = lines.filter((l) => l.kind === "lat").map((l) => l.deg);
  const lons = lines.filter((l) => l.kind === "lon").map((l) => l.deg);
  assert.ok(lats.includes(0) && lats.length >= 3, JSON.stringify(lines));
  assert.ok(lons.includes(180) && lons.length >= 3, JSON.stringify(lines));
  for (const l of lines) {
    const [i, j] = l.kind === "lat" ? [90 - l.deg, 0] : [0, l.deg];
    const at = await page.evaluate((i, j) => window.tgmViewer.gridToCanvas(i, j), i, j);
    assert.ok(Math.abs((l.kind === "lat" ? at.y : at.x) - l.at) <= 1, `${l.kind} ${l.deg}: ${JSON.stringify(at)} ${l.at}`);
  }
  const overlayAlpha = (x, y) =>
    page.evaluate((x, y) => document.getElementById("grid").getContext("2d").getImageData(x, y, 1, 1).data[3], x, y);
  const equator = lines.find((l) => l.kind === "lat" && l.deg === 0);
  const meridian = lines.find((l) => l.kind === "lon" && l.deg === 180);
  assert.ok((await overlayAlpha(Math.floor(meridian.at) + 20, Math.floor(equator.at))) > 0, "no line drawn on the equator");
  assert.equal(await overlayAlpha(Math.floor(meridian.at) + 20, Math.floor(equator.at) + 20), 0, "the overlay covers the field between lines");
  assert.deepEqual(await page.evaluate(() => window.tgmViewer.latLonAt(45, 90)), [45, 90]);

  // The value under the pointer, with its place on the globe.
  {
    const { x, y } = await page.evaluate(() => window.tgmViewer.gridToCanvas(45, 270));
    const box = await (await page.$("#field")).boundingBox();
    await page.mouse.move(box.x + x + 1, box.y + y + 1);
    assert.equal(await page.$eval("#cursor", (e) => e.textContent), `row 45, column 270, 45.00°N 90.00°W: ${step0[45 * NX + 270]}`);
  }

  // The step slider over the steps of 2 m temperature (the library's view: MARS keys but param).
  assert.equal(await page.$eval("#dim-step", (s) => s.max), String(STEPS.length - 1));
  assert.equal(await page.$("#dim-levelist"), null);
  assert.equal(await page.$("#dim-date"), null, "a key every field shares gets no slider");
  await page.$eval("#dim-step", (s) => {
    s.value = "3";
    s.dispatchEvent(new Event("input"));
  });
  await page.waitForFunction(() => window.tgmViewer.state.m === 3 && document.body.dataset.state === "ready");
  assert.equal(await page.$eval("#dim-step-out", (e) => e.textContent), "18");
  assert.match(await page.$eval("#title", (e) => e.textContent), /^message 3, object 0: 2t · step 18$/);

  // The level and member sliders over q: levels in numeric order.
  await page.click("nav .object[data-message='6']");
  await page.waitForFunction(() => window.tgmViewer.state.m === 6 && document.body.dataset.state === "ready");
  assert.equal(await page.$("#dim-step"), null);
  assert.equal(await page.$eval("#dim-levelist", (s) => `${s.max} ${s.value}`), "1 1");
  assert.equal(await page.$eval("#dim-levelist-out", (e) => e.textContent), "850");
  await page.$eval("#dim-levelist", (s) => {
    s.value = "0";
    s.dispatchEvent(new Event("input"));
  });
  await page.waitForFunction(() => window.tgmViewer.state.m === 7 && document.body.dataset.state === "ready");
  await page.$eval("#dim-number", (s) => {
    s.value = "1";
    s.dispatchEvent(new Event("input"));
  });
  await page.waitForFunction(() => window.tgmViewer.state.m === 9 && document.body.dataset.state === "ready");
  assert.equal(await page.evaluate(() => window.tgmViewer.valueAt(0, 0)), 3000);
  assert.equal(await page.evaluate(() => window.tgmViewer.state.graticule.length), 0, "q has no geography");

  // The message slider: step 12.
  await page.$eval("#message-slider", (s) => {
    s.value = "2";
    s.dispatchEvent(new Event("input"));
  });
  await page.waitForFunction(() => window.tgmViewer.state.m === 2 && document.body.dataset.state === "ready");
  const step12 = field((i, j) => t2m(i, j, 12));
  for (const [i, j] of POINTS) {
    assert.deepEqual(await pixelAt(page, i, j), expectedColour(step12, i, j), `step 12 grid point ${i},${j}`);
  }

  // The 3-D object, third level through the slice slider.
  await page.click("nav .object[data-message='4']");
  await page.waitForFunction(() => window.tgmViewer.state.m === 4 && document.body.dataset.state === "ready");
  await page.$eval("#slice-slider", (s) => {
    s.value = "2";
    s.dispatchEvent(new Event("input"));
  });
  const level = field((i, j) => t3d(2, i, j));
  for (const [i, j] of POINTS) {
    assert.deepEqual(await pixelAt(page, i, j), expectedColour(level, i, j), `level 250 grid point ${i},${j}`);
  }

  // Value under the cursor.
  const { x, y } = await page.evaluate(() => window.tgmViewer.gridToCanvas(90, 180));
  const box = await (await page.$("#field")).boundingBox();
  await page.mouse.move(box.x + x + 1, box.y + y + 1);
  assert.equal(await page.$eval("#cursor", (e) => e.textContent), `row 90, column 180: ${level[90 * NX + 180]}`);

  // A volume: the text under the pointer gives the voxel's place in the patient (the view's geometry).
  await page.click("nav .object[data-message='10']");
  await page.waitForFunction(() => window.tgmViewer.state.m === 10 && document.body.dataset.state === "ready");
  await page.$eval("#slice-slider", (s) => {
    s.value = "1";
    s.dispatchEvent(new Event("input"));
  });
  assert.deepEqual(await page.evaluate(() => window.tgmViewer.patientAt(3, 2)), [-9, 22.25, 32.5]);
  assert.equal(await page.evaluate(() => window.tgmViewer.cursorText(3, 2)), "row 3, column 2, LPS (-9.0, 22.3, 32.5) mm: 37");
  assert.match(await page.$eval("#title", (e) => e.textContent), /^message 10, object 0: brain — slice 1$/);

  // Back to 2 m temperature for the picture.
  await page.click("nav .object[data-message='0']");
  await page.waitForFunction(() => window.tgmViewer.state.m === 0 && document.body.dataset.state === "ready");
  mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
  await page.screenshot({ path: SCREENSHOT });

  // Decode speed of the 0.25° field (simple_packing 16 + szip) in the browser.
  const speed = await page.evaluate(async () => {
    const a = window.tgmViewer.state.archive;
    await a.decodeObject(5, 0); // fetched once
    const t0 = performance.now();
    const runs = 5;
    for (let r = 0; r < runs; r++) await a.decodeObject(5, 0);
    const ms = (performance.now() - t0) / runs;
    return { ms, mb: (721 * 1440 * 8) / 1e6 };
  });
  console.log(`browser decode: ${speed.mb.toFixed(2)} MB float64 (simple_packing 16 + szip) in ${speed.ms.toFixed(1)} ms = ${(speed.mb / (speed.ms / 1000)).toFixed(0)} MB/s`);
  assert.deepEqual(problems, []);
  await page.close();
});

test("tgm view --site: the same page from a plain static server", async () => {
  const site = path.join(dir, "site");
  tgm("view", era5, "--site", site);
  const srv = await staticServer(site);
  try {
    const { page, problems } = await watchedPage();
    await page.goto(`${srv.origin}/`, { waitUntil: "load" });
    await ready(page);
    assert.equal((await page.$$("nav .object")).length, STEPS.length + 2 + Q.length + 1);
    const step0 = field((i, j) => t2m(i, j, 0));
    for (const [i, j] of POINTS) {
      assert.deepEqual(await pixelAt(page, i, j), expectedColour(step0, i, j), `grid point ${i},${j}`);
    }
    // The archive was read by ranges, not whole.
    assert.ok(srv.log.some((r) => r.startsWith("bytes=")), srv.log.join(" "));
    assert.deepEqual(problems, []);
    await page.close();
  } finally {
    await srv.close();
  }
});
