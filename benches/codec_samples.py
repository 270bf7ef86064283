#!/usr/bin/env python3
"""Decodes the real samples of the book's codec tables into raw float64.

    python3 benches/codec_samples.py DIR CFGRIB_SDIST

Run by benches/codecs.sh, which fetches the inputs from PyPI; nothing here
is committed. Writes, for each sample it can read, DIR/NAME.f64 (the values,
float64 little-endian, C order) and DIR/NAME.json (title, shape, source),
which `benches/codecs.rs` reads (TGM_CODEC_SAMPLES=DIR):

- era5: ERA5 temperature on pressure levels from cfgrib's test data
  (`tests/sample-data/era5-levels-members.grib` in its sdist), decoded by
  ecCodes itself (`grib_get`, `grib_get_data` of Debian libeccodes-tools)
  into [time, member, level, latitude, longitude];
- mri: nibabel's test image `example4d.nii.gz` (a 4-D EPI scan), decoded by
  nibabel into [volume, z, y, x] (x fastest, the file's voxel order).

A sample whose reader is missing is left out with a message saying why;
the bench then uses its generated stand-in for it.
"""

import json
import pathlib
import shutil
import subprocess
import sys
import tarfile

import numpy as np

GRIB_MEMBER = "tests/sample-data/era5-levels-members.grib"


def write(out, name, title, source, values):
    data = np.ascontiguousarray(values, dtype="<f8")
    (out / f"{name}.f64").write_bytes(data.tobytes())
    meta = {"title": title, "shape": list(data.shape), "source": source}
    (out / f"{name}.json").write_text(json.dumps(meta) + "\n")
    print(f"{name}: {title}, {list(data.shape)} from {source}")


def era5(out, sdist):
    if not sdist.is_file():
        print(f"era5: skipped, {sdist} is absent", file=sys.stderr)
        return
    if shutil.which("grib_get_data") is None or shutil.which("grib_get") is None:
        print("era5: skipped, ecCodes' grib_get/grib_get_data not found "
              "(Debian libeccodes-tools)", file=sys.stderr)
        return
    with tarfile.open(sdist) as tar:
        member = next((m for m in tar.getmembers() if m.name.endswith(GRIB_MEMBER)), None)
        if member is None:
            print(f"era5: skipped, {sdist} has no {GRIB_MEMBER}", file=sys.stderr)
            return
        grib = out / "era5-levels-members.grib"
        grib.write_bytes(tar.extractfile(member).read())
    keys = "shortName,dataDate,dataTime,number,level,Nj,Ni,numberOfMissing"
    rows = subprocess.run(["grib_get", "-p", keys, str(grib)], check=True,
                          capture_output=True, text=True).stdout.split("\n")
    heads = [r.split() for r in rows if r.strip()]
    text = subprocess.run(["grib_get_data", "-F", "%.17g", str(grib)], check=True,
                          capture_output=True, text=True).stdout
    # One header line, then Nj * Ni "lat lon value" lines, per message.
    fields, lines, at = [], text.split("\n"), 0
    for h in heads:
        nj, ni, missing = int(h[5]), int(h[6]), int(h[7])
        if missing:
            raise SystemExit(f"era5: message {h} has missing values")
        block = lines[at + 1:at + 1 + nj * ni]
        at += 1 + nj * ni
        vals = np.array([float(line.split()[2]) for line in block]).reshape(nj, ni)
        fields.append((h, vals))
    temps = [(h, v) for h, v in fields if h[0] == "t"]
    times = sorted({(h[1], h[2]) for h, _ in temps})
    members = sorted({int(h[3]) for h, _ in temps})
    levels = sorted({int(h[4]) for h, _ in temps})
    nj, ni = temps[0][1].shape
    cube = np.full((len(times), len(members), len(levels), nj, ni), np.nan)
    for h, v in temps:
        cube[times.index((h[1], h[2])), members.index(int(h[3])), levels.index(int(h[4]))] = v
    if np.isnan(cube).any():
        raise SystemExit("era5: the temperature messages do not fill a "
                         "[time, member, level] grid")
    write(out, "era5",
          f"ERA5 temperature, {len(levels)} pressure levels, {len(members)} members, "
          f"{len(times)} times",
          f"cfgrib sdist {sdist.name}: {GRIB_MEMBER}", cube)
    grib.unlink()


def mri(out):
    try:
        import nibabel
    except ImportError:
        print("mri: skipped, nibabel is not importable", file=sys.stderr)
        return
    # The wheel's test data (nibabel.testing.data_path, without importing
    # nibabel.testing, which needs pytest).
    path = pathlib.Path(nibabel.__file__).parent / "tests" / "data" / "example4d.nii.gz"
    if not path.is_file():
        print(f"mri: skipped, {path} is absent", file=sys.stderr)
        return
    img = nibabel.load(path)
    # nibabel indexes [x, y, z, t]; reversed, C order is the file's voxel order.
    vol = np.asarray(img.dataobj).astype(np.float64).transpose()
    write(out, "mri", "MRI EPI volumes (nibabel example4d)",
          f"nibabel {nibabel.__version__}: tests/data/example4d.nii.gz", vol)


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    out, sdist = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    era5(out, sdist)
    mri(out)


if __name__ == "__main__":
    main()
