"""``tgm.kerchunk_refs``: kerchunk (fsspec reference) references of a
``.tgm`` file, read by zarr and xarray without tgm (``spec/kerchunk.md``)."""

import json
import os

from . import _native


def kerchunk_refs(path, target=None):
    """The fsspec reference document (``{"version": 1, "refs": {...}}``) of
    the local file ``path``: a zarr v2 group with one chunk per object
    pointing at its payload bytes and the numcodecs chain that decodes them.
    Chunk references point at ``target`` (default: the file's absolute
    path). Objects no chain expresses are listed under
    ``tgm_unexpressible`` in the group's ``.zattrs``.

    Read with ``xr.open_dataset("reference://", engine="zarr",
    backend_kwargs={"consolidated": False, "storage_options": {"fo": refs,
    "remote_protocol": "file"}})``.
    """
    text, _ = _native.kerchunk_refs(os.fspath(path), target)
    return json.loads(text)
