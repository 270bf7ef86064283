"""Hostile variants of honest GRIB, NetCDF, NIfTI, DICOM and Tensogram
files for ``test_hostile_doors.py``: random byte flips (anywhere and in
the header), cuts, 4-byte fields set to extremes, the same inside the
gzip stream of a ``.nii.gz``, and header fields set to what the command
line's hostile suites set them to (``cli/tests/grib_roundtrip.rs``,
``medical_nifti.rs``, ``medical_samples.rs``): sizes the file cannot hold,
sizes whose product overflows, negative sizes."""

import gzip
import pathlib
import random
import struct

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "fuzz" / "corpus"

# Per sample: flips anywhere, flips in the first HEADER bytes, cuts, and
# 4-byte fields set to an extreme within the header.
FLIPS, HEADER_FLIPS, INFLATIONS, HEADER = 6, 10, 12, 1024
CUTS = (1, 8, 64, 0.25, 0.5, 0.9)
EXTREMES = (b"\xff\xff\xff\xff", b"\x7f\xff\xff\xff", b"\x00\x00\x00\x00", b"\x80\x00\x00\x00")


TARGET = {
    "grib": "weather_grib_scan",
    "netcdf": "weather_netcdf_classic",
    "nifti": "medical_nifti",
    "dicom": "medical_dicom_scan",
}


def corpus(kind):
    """The fuzz corpus's seeds of converter ``kind``."""
    return sorted(p for p in (CORPUS / TARGET[kind]).iterdir() if p.is_file())


def regressions(kind):
    """The inputs the fuzz target of converter ``kind`` once failed on
    (``testdata/regress``), which the command line refuses too."""
    return sorted((ROOT / "testdata" / "regress").glob(TARGET[kind] + "-*"))


def package_samples(kind, names=None):
    """Real NIfTI (nibabel's) and DICOM (pydicom's) test files ``names``,
    by default one per reader path: NIfTI-1, NIfTI-2 gzipped; native,
    deflated, RLE, JPEG 2000 (OpenJPEG) and JPEG-LS (CharLS) pixel data.
    Empty without the package."""
    try:
        if kind == "nifti":
            import nibabel.testing

            d = pathlib.Path(nibabel.testing.data_path)
            names = names or ("anatomical.nii", "example_nifti2.nii.gz")
        elif kind == "dicom":
            import pydicom.data

            d = pathlib.Path(pydicom.data.get_testdata_file("CT_small.dcm")).parent
            names = names or (
                "CT_small.dcm",
                "image_dfl.dcm",
                "MR_small_RLE.dcm",
                "MR_small_jp2klossless.dcm",
                "MR_small_jpeg_ls_lossless.dcm",
            )
        else:
            return []
    except ImportError:
        return []
    return [d / n for n in names]


def _flip(b, rng, end):
    for _ in range(rng.randint(1, 8)):
        b[rng.randrange(end)] ^= 1 << rng.randrange(8)


def mutations(data, seed):
    """Deterministic hostile variants of ``data``."""
    rng = random.Random(seed)
    head = min(len(data), HEADER)
    out = []
    for n, end in ((FLIPS, len(data)), (HEADER_FLIPS, head)):
        for _ in range(n):
            b = bytearray(data)
            _flip(b, rng, end)
            out.append(bytes(b))
    for cut in CUTS:
        n = cut if isinstance(cut, int) else int(len(data) * cut)
        out.append(data[: min(n, len(data) - 1)])
    for _ in range(INFLATIONS):
        b = bytearray(data)
        at = rng.randrange(max(1, head - 4))
        b[at : at + 4] = rng.choice(EXTREMES)
        out.append(bytes(b))
    return out


def file_mutations(path, seed):
    """:func:`mutations` of the file ``path``; for a ``.gz`` file, also
    of the bytes inside the gzip stream, compressed again."""
    data = path.read_bytes()
    out = mutations(data, seed)
    if path.suffix == ".gz":
        out += [gzip.compress(m, mtime=0) for m in mutations(gzip.decompress(data), seed + 1)]
    return out


def grib2_counts(data):
    """GRIB2 message ``data`` with the counts of its grid (section 3,
    template 3.0: points, Ni, Nj) and of its coded values (section 5) set
    to sizes its bytes cannot hold: all to 4 225 000 000 (65000²), the
    points alone, the values alone."""
    if data[:4] != b"GRIB" or data[7] != 2:
        return []
    sections, at = {}, 16
    while at + 5 <= len(data) and data[at : at + 4] != b"7777":
        (n,) = struct.unpack(">I", data[at : at + 4])
        sections.setdefault(data[at + 4], at)
        if n < 5:
            return []
        at += n
    s3, s5 = sections.get(3), sections.get(5)
    if s3 is None or s5 is None:
        return []
    huge = struct.pack(">I", 4_225_000_000)
    wide = struct.pack(">I", 65_000)

    def patched(*fields):
        b = bytearray(data)
        for off, value in fields:
            b[off : off + 4] = value
        return bytes(b)

    points, ni, nj, values = s3 + 6, s3 + 30, s3 + 34, s5 + 5
    return [
        patched((points, huge), (ni, wide), (nj, wide), (values, huge)),
        patched((points, huge)),
        patched((values, huge)),
        patched((ni, wide), (nj, wide)),
        patched((values, b"\0\0\0\0")),
    ]


def nifti1_fields(data):
    """NIfTI-1 ``data`` (348-byte header, either byte order) with its
    dimensions, voxel type and voxel offset set to what no file holds."""
    if len(data) < 352:
        return []
    order = "<" if struct.unpack("<i", data[:4])[0] == 348 else ">"
    if struct.unpack(order + "i", data[:4])[0] != 348:
        return []

    def patched(off, fmt, *values):
        b = bytearray(data)
        struct.pack_into(order + fmt, b, off, *values)
        return bytes(b)

    return [
        patched(40, "8h", 3, 32767, 32767, 32767, 1, 1, 1, 1),  # 3.5e13 voxels
        patched(40, "8h", 7, 32767, 32767, 32767, 32767, 32767, 32767, 32767),
        patched(40, "8h", 3, 4, -1, 4, 1, 1, 1, 1),
        patched(40, "8h", 9, 1, 1, 1, 1, 1, 1, 1),
        patched(40, "8h", 0, 1, 1, 1, 1, 1, 1, 1),
        patched(70, "2h", 0x7FFF, 8),  # unknown datatype
        patched(70, "2h", 16, 0),  # float32 of 0 bits
        patched(108, "f", 1e30),  # vox_offset far past the end
        patched(108, "f", -352.0),
        patched(108, "f", float("nan")),
    ]


def nifti2(dims, datatype=2, bitpix=8, data=b"\0" * 16):
    """A little-endian NIfTI-2 file (540-byte header, ``n+2`` magic) of
    ``dims`` (up to 7) and ``data`` after the header."""
    h = bytearray(544)
    struct.pack_into("<i", h, 0, 540)
    h[4:12] = b"n+2\0\r\n\x1a\n"
    struct.pack_into("<hh", h, 12, datatype, bitpix)
    struct.pack_into("<8q", h, 16, len(dims), *dims, *[1] * (7 - len(dims)))
    struct.pack_into("<8d", h, 104, 1, *[1.0] * 7)  # pixdim
    struct.pack_into("<q", h, 168, 544)  # vox_offset
    struct.pack_into("<dd", h, 176, 1.0, 0.0)  # scl_slope, scl_inter
    return bytes(h) + data


def nifti2_hostile():
    """``medical_nifti.rs``'s hostile NIfTI-2 headers: 2⁶⁰ bytes declared,
    a voxel count past u64, a negative dimension."""
    return [
        nifti2([1 << 20, 1 << 20, 1 << 20]),
        nifti2([1 << 40, 1 << 40], datatype=64, bitpix=64),
        nifti2([4, -1]),
    ]
