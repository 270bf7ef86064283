"""GRIB, NetCDF, NIfTI and DICOM to and from Tensogram, in process (the
``tgm-convert`` crate; ``tgm convert-grib``, ``to-grib``,
``convert-netcdf``, ``to-netcdf``, ``convert-nifti``, ``to-nifti``,
``convert-dicom``, ``to-dicom``).

The keyword arguments are the command line's options (``split``,
``all_keys``, ``encoding``, ``bits``, ``filter``, ``compression``,
``level``, ``no_hash``, ``max_decoded_bytes``, ``split_by``, ``cf``),
and the reference package's names are accepted too (``grouping``,
``preserve_all_keys``, ``compression_level``, ``hash``, ``threads``).
Defaults are the reference's: raw float64 (``encoding="none"``), no
compression.

Each converter is built only with its cargo feature (``grib``: ecCodes;
``netcdf``: netCDF-C; ``nifti``, ``dicom``: none); without it the function
raises ``RuntimeError`` naming the feature.
"""

import os
import tempfile
import warnings

from . import _native, _remote

_FEATURE = {
    "grib": ("GRIB", "ecCodes (Debian libeccodes-dev)"),
    "netcdf": ("NetCDF", "netCDF-C (Debian libnetcdf-dev)"),
    "nifti": ("NIfTI", "no system library"),
    "dicom": ("DICOM", "no system library"),
}


def has(feature):
    """Whether the converter ``feature`` (``"grib"``, ``"netcdf"``) is built in."""
    return hasattr(_native, f"convert_{feature}")


def _native_fn(feature, name):
    fn = getattr(_native, name, None)
    if fn is None:
        what, lib = _FEATURE[feature]
        raise RuntimeError(
            f"tgm was built without {what} support: {name} needs the cargo feature "
            f"'{feature}' and {lib}; rebuild with "
            f"MATURIN_PEP517_ARGS='--features {feature}' pip install ./python"
        )
    return fn


def _paths(path, directories=False):
    """``path`` (one path or a list) as a list of existing paths; a
    directory only where the converter reads directories."""
    if isinstance(path, (list, tuple)):
        paths = [os.fspath(p) for p in path]
    else:
        paths = [os.fspath(path)]
    if not paths:
        raise ValueError("no input files")
    for p in paths:
        if not os.path.exists(p):
            raise FileNotFoundError(2, "No such file or directory", p)
        if os.path.isdir(p) and not directories:
            raise IsADirectoryError(21, "Is a directory", p)
    return paths


def _choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"unknown {name} {value!r} (one of {', '.join(allowed)})")
    return value


def _stages(encoding, bits, filter, compression, compression_level=None, level=None):
    """``(encoding, bits, filter, compression, level)`` for the native
    converters, whose rules check them (``spec/pipeline.md`` §10, as the
    command line's flags are checked); ``compression_level`` is the
    reference's name for ``level``."""
    if level is None:
        level = compression_level
    for name, v in (("bits", bits), ("level", level)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise TypeError(f"{name} must be an integer, got {type(v).__name__}")
    if bits is not None and bits < 0:
        raise ValueError(f"bits must be a non-negative integer, got {bits}")
    return encoding, bits, filter, compression, level


def _no_hash(hash, no_hash):
    if no_hash is not None:
        return bool(no_hash)
    if hash is None:
        return True
    if hash == "xxh3":
        return False
    raise ValueError(f"unknown hash {hash!r} (only 'xxh3' or None)")


def _threads(threads):
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ValueError(f"threads must be a non-negative integer, got {threads!r}")


def convert_grib(
    path,
    *,
    grouping="merge_all",
    preserve_all_keys=False,
    encoding="none",
    bits=None,
    filter="none",
    compression="none",
    compression_level=None,
    threads=0,
    hash="xxh3",
    split=None,
    all_keys=None,
    level=None,
    no_hash=None,
    max_decoded_bytes=None,
    per_object_metadata=False,
    output=None,
    storage_options=None,
    force=False,
):
    """GRIB file(s) → ``list[bytes]`` of Tensogram messages: one per input
    file (``grouping="merge_all"``), or one per GRIB message
    (``grouping="one_to_one"`` or ``split=True``). ``encoding`` is
    ``none`` (float64), ``source`` (the field's own packing where exact),
    ``codes`` (as ``source``, and decimal-scaled fields as their own codes
    in GRIB's evaluation order: a tgm extension, exact when tgm reads it,
    within the last bit when the reference does; GRIB1 and GRIB2 spectral fields as
    their codes and unpacked subset: a tgm extension, exact when tgm reads
    it, the codes without the Laplacian scaling in the reference) or
    ``simple_packing`` at
    ``bits`` (default 16); ``compression`` is
    ``none``, ``auto``, ``szip``, ``zstd`` (``level``) or ``lz4``.
    ``threads`` is accepted for the reference's sake; conversion runs on
    one thread. The keys every field of a message shares (the grid, the
    centre…) are written once; ``per_object_metadata=True`` writes every
    field's keys whole, as the reference does (tgm reads both alike).
    ``output`` writes the archive there instead, each message as soon as
    its fields are read (:func:`_written_by`)."""
    fn = _native_fn("grib", "convert_grib")
    _choice("grouping", grouping, ("merge_all", "one_to_one"))
    _threads(threads)
    p = _stages(encoding, bits, filter, compression, compression_level, level)
    _check_output(output, storage_options)
    args = (
        _paths(path),
        grouping == "one_to_one" if split is None else bool(split),
        bool(preserve_all_keys if all_keys is None else all_keys),
        p,
        _no_hash(hash, no_hash),
        max_decoded_bytes,
        bool(per_object_metadata),
    )
    if output is None:
        return fn(*args)
    return _written_by(lambda sink: fn(*args, sink=sink), output, storage_options, force)


def convert_grib_buffer(buf, **kwargs):
    """:func:`convert_grib` of GRIB bytes (``bytes``, ``bytearray``,
    ``memoryview`` or a ``uint8`` array) instead of a file."""
    _native_fn("grib", "convert_grib")
    try:
        data = memoryview(buf).cast("B")
    except TypeError:
        raise TypeError(
            f"convert_grib_buffer expects a bytes-like object, got {type(buf).__name__}"
        ) from None
    fd, tmp = tempfile.mkstemp(suffix=".grib")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        return convert_grib(tmp, **kwargs)
    finally:
        os.unlink(tmp)


def to_grib(messages):
    """Messages written by :func:`convert_grib` → GRIB2 ``bytes``, each
    field on its source's header."""
    fn = _native_fn("grib", "to_grib")
    return fn([bytes(m) for m in messages])


def convert_netcdf(
    path,
    *,
    split_by="file",
    cf=False,
    encoding="none",
    bits=None,
    filter="none",
    compression="none",
    compression_level=None,
    threads=0,
    hash="xxh3",
    level=None,
    no_hash=None,
    max_decoded_bytes=None,
    output=None,
    storage_options=None,
    force=False,
):
    """NetCDF-3/4 file(s) → ``list[bytes]`` of Tensogram messages grouped
    by ``split_by`` (``file``, ``variable`` or ``record``); ``cf=True``
    applies ``scale_factor``/``add_offset``. ``simple_packing`` applies to
    float64 variables only. Variables that cannot be converted are left
    out with a ``UserWarning`` naming each. ``output`` writes the archive there instead,
    each message as soon as it is encoded (:func:`_written_by`)."""
    fn = _native_fn("netcdf", "convert_netcdf")
    _choice("split_by", split_by, ("file", "variable", "record"))
    _threads(threads)
    p = _stages(encoding, bits, filter, compression, compression_level, level)
    _check_output(output, storage_options)
    args = (_paths(path), split_by, bool(cf), p, _no_hash(hash, no_hash), max_decoded_bytes)
    return _converted(fn, args, output, storage_options, force, "variable left out")


def _check_output(output, storage_options):
    """Refuses ``storage_options`` without an ``output``, before converting."""
    if output is None and storage_options:
        raise TypeError("storage_options apply to an output URL; pass output=")


def _converted(fn, args, output, storage_options, force, left_out):
    """Runs the native converter ``fn(*args, sink=)``, which returns its
    messages and what it left out: the messages, or with ``output`` the
    archive written there (:func:`_written_by`); then a ``UserWarning``
    for each input left out (``"<input>: <left_out>: <why>"``), pointing at
    the caller of the public function."""
    skipped = []

    def convert(sink=None):
        messages, dropped = fn(*args, sink=sink)
        skipped.extend(dropped)
        return messages

    result = convert() if output is None else _written_by(convert, output, storage_options, force)
    for item, why in skipped:
        warnings.warn(f"{item}: {left_out}: {why}", UserWarning, stacklevel=3)
    return result


def _written_by(convert, output, storage_options, force):
    """The archive a converter writes straight into a new output at
    ``output`` (a local path, or a URL ``s3://``, ``gs://``, ``az://``,
    ``http(s)://`` whose store ``storage_options`` configure as for
    reads), each message as soon as it is encoded, so memory holds one
    message, ending with its catalogue → ``{"target", "bytes", "etag"}``.
    ``convert(sink)`` runs the native converter into the sink. The archive
    appears only when complete (an upload is aborted on failure;
    ``spec/remote.md`` §7); an existing one is refused unless ``force``."""
    from ._sink import Output

    with Output(output, storage_options, overwrite=force) as out:
        convert(out._native)
    return out.written()


def _write_new(path, force, write, storage_options=None):
    """Runs ``write(tmp)`` on a fresh local name and puts the result at
    ``path`` → ``{"target", "bytes", "etag"}``: a local ``path`` by a
    rename of a sibling (an existing one refused unless ``force``); a URL
    by streaming the file into a new object through tgm's sink
    (``spec/remote.md`` §7: it appears only when whole, an existing object
    refused unless ``force``), configured by ``storage_options``."""
    if _remote.is_url(path):
        from ._sink import Output

        with tempfile.TemporaryDirectory(prefix="tgm-out-") as d:
            tmp = os.path.join(d, "output")
            write(tmp)
            with open(tmp, "rb") as fh, Output(path, storage_options, overwrite=force) as out:
                while chunk := fh.read(_UPLOAD_CHUNK):
                    out.write(chunk)
            return out.written()
    if storage_options:
        raise TypeError("storage_options apply to URLs, not to local paths")
    path = os.fspath(path)
    if os.path.exists(path) and not force:
        raise FileExistsError(17, "File exists (pass force=True to replace it)", path)
    fd, tmp = tempfile.mkstemp(suffix=".part", dir=os.path.dirname(os.path.abspath(path)))
    os.close(fd)
    os.unlink(tmp)
    try:
        write(tmp)
        size = os.path.getsize(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return {"target": path, "bytes": size, "etag": None}


# Bytes read from the local file per write into an upload.
_UPLOAD_CHUNK = 8 << 20


def convert_nifti(
    path,
    *,
    mask=None,
    byte_order="keep",
    compression="zstd",
    level=None,
    max_decoded_bytes=None,
    output=None,
    storage_options=None,
    force=False,
):
    """NIfTI-1/2 volume(s) (``.nii`` or ``.nii.gz``) → one message (``bytes``)
    with one object per input, and ``mask`` (a segmentation on the first
    input's grid) as a further object. ``compression`` is ``zstd`` (after a
    byte shuffle; the default), ``szip`` (integers) or ``none``; every
    choice is lossless. ``byte_order``: ``keep``, ``little`` or ``big``.
    ``output`` writes the archive there instead, the message encoded
    straight into it (:func:`_written_by`)."""
    fn = _native_fn("nifti", "convert_nifti")
    _choice("byte_order", byte_order, ("keep", "little", "big"))
    level = _stages(None, None, None, compression, None, level)[4]
    if mask is not None:
        mask = _paths(mask)[0]
    _check_output(output, storage_options)
    args = (_paths(path), mask, byte_order, compression, level, max_decoded_bytes)
    if output is None:
        return fn(*args)
    return _written_by(lambda sink: fn(*args, sink=sink), output, storage_options, force)


def to_nifti(input, output, *, message=0, object=0, nifti2=False, force=False, storage_options=None):
    """Object ``object`` of message ``message`` of the ``.tgm`` file
    ``input`` → a NIfTI file at ``output`` (gzip-compressed when it ends in
    ``.gz``; NIfTI-2 with ``nifti2``, else only when a dimension needs it)
    → ``{"target", "bytes", "etag"}``. ``output`` may be a URL
    (``s3://``, ``gs://``, ``az://``, ``http(s)://``; ``storage_options``
    as for reads). An existing ``output`` is refused unless ``force``."""
    fn = _native_fn("nifti", "to_nifti")
    nii = fn(_paths(input)[0], int(message), int(object), bool(nifti2), str(output).endswith(".gz"))

    def write(tmp):
        with open(tmp, "xb") as fh:
            fh.write(nii)

    return _write_new(output, force, write, storage_options)


def to_netcdf(messages, path, *, force=False, storage_options=None):
    """Messages written by :func:`convert_netcdf` → one NetCDF-4 file at
    ``path`` → ``{"target", "bytes", "etag"}``. The file is written beside
    ``path`` and renamed into place only when complete; a URL ``path``
    (``storage_options`` as for reads) gets the finished file as a new
    object. An existing ``path`` is refused unless ``force``."""
    fn = _native_fn("netcdf", "to_netcdf")
    messages = [bytes(m) for m in messages]
    if not messages:
        raise ValueError("no messages to write")
    return _write_new(path, force, lambda tmp: fn(messages, tmp), storage_options)


def convert_dicom(
    path,
    *,
    recursive=False,
    skip_unsupported=False,
    deidentify=False,
    retain_patient_characteristics=False,
    retain_full_dates=False,
    retain_device_identity=False,
    retain_institution_identity=False,
    deid_key=None,
    allow_burned_in=False,
    compression="zstd",
    level=None,
    output=None,
    storage_options=None,
    force=False,
):
    """DICOM file(s) and directories (``recursive`` descends) →
    ``list[bytes]``, one message per series. ``skip_unsupported=True``
    leaves out a file found in a directory that cannot be converted (a
    colour image, an unsupported transfer syntax) instead of stopping at
    it. ``deidentify=True`` applies
    the PS3.15 basic profile (the ``retain_*`` options keep what they name;
    ``deid_key`` is a key file for reproducible UIDs, else a random key).
    Files left out are named in a ``UserWarning`` each. ``compression`` as
    for :func:`convert_nifti`; ``output`` writes the archive there
    instead, each series' message as soon as it is encoded
    (:func:`_written_by`)."""
    fn = _native_fn("dicom", "convert_dicom")
    level = _stages(None, None, None, compression, None, level)[4]
    retain = (
        retain_patient_characteristics,
        retain_full_dates,
        retain_device_identity,
        retain_institution_identity,
    )
    if not deidentify and (any(retain) or deid_key is not None or allow_burned_in):
        raise ValueError("the retain_*, deid_key and allow_burned_in options need deidentify=True")
    deid = None
    if deidentify:
        key = None if deid_key is None else _paths(deid_key)[0]
        deid = (*(bool(r) for r in retain), key, bool(allow_burned_in))
    _check_output(output, storage_options)
    args = (_paths(path, directories=True), bool(recursive), bool(skip_unsupported), deid, compression, level)
    return _converted(fn, args, output, storage_options, force, "left out")


def to_dicom(input, output_dir, *, message=0, object=0, force=False, strict=False):
    """Object ``object`` of message ``message`` of the ``.tgm`` file
    ``input`` (a series written by :func:`convert_dicom`) → slice files
    ``slice_NNNNN.dcm`` in ``output_dir`` (created if missing) → their
    paths. Every slice is written before any is renamed into place;
    existing slice files are refused unless ``force``. A value the
    archive holds that its VR's rules reject is written as the source
    held it with a warning naming the attribute, or refused (ValueError)
    when ``strict``."""
    fn = _native_fn("dicom", "to_dicom")
    files, nonconforming = fn(_paths(input)[0], int(message), int(object), bool(strict))
    for w in nonconforming:
        warnings.warn(f"{w}: written as the source held it (strict=True refuses it)", UserWarning, stacklevel=2)
    output_dir = os.fspath(output_dir)
    os.makedirs(output_dir, exist_ok=True)
    targets = [os.path.join(output_dir, f"slice_{i:05}.dcm") for i in range(len(files))]
    if not force:
        for t in targets:
            if os.path.exists(t):
                raise FileExistsError(17, "File exists (pass force=True to replace it)", t)
    tmps = []
    try:
        for data in files:
            fd, tmp = tempfile.mkstemp(suffix=".part", dir=output_dir)
            tmps.append(tmp)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        for tmp, target in zip(tmps, targets):
            os.replace(tmp, target)
    finally:
        for tmp in tmps:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return targets
