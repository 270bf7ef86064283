"""``tgm.kerchunk_refs``: kerchunk (fsspec reference) references of a
``.tgm`` file, read by zarr and xarray without tgm (``spec/kerchunk.md``)."""

import json
import os

from . import _native, _remote
from ._errors import InvalidArgumentError


def kerchunk_refs(path, target=None, *, storage_options=None):
    """The fsspec reference document (``{"version": 1, "refs": {...}}``) of
    ``path``: a local file, a URL (``http(s)://``, ``s3://``, ``gs://``,
    ``az://``; ``storage_options`` as in
    :meth:`tgm.TensogramFile.open_remote`) or a file object with ``read``
    and ``seek``. The result is a zarr v2 group with one chunk per object
    pointing at its payload bytes and the numcodecs chain that decodes them.
    Chunk references point at ``target``: by default the local file's
    absolute path or the URL; a file object needs ``target``. Objects no
    chain expresses are listed under ``tgm_unexpressible`` in the group's
    ``.zattrs``. A URL or file object is read whole, one message at a time.

    Read with ``xr.open_dataset("reference://", engine="zarr",
    backend_kwargs={"consolidated": False, "storage_options": {"fo": refs,
    "remote_protocol": "file"}})`` (the URL's protocol for a remote file).
    """
    if _remote.is_url(path) or _remote.is_reader(path):
        if target is None:
            if not _remote.is_url(path):
                raise InvalidArgumentError(
                    f"{_remote.reader_name(path)}: kerchunk_refs of a file object "
                    "needs target (the path or URL the references point at)"
                )
            target = path
        nf = _remote.open_native(path, storage_options, False)
        text, _ = nf.kerchunk_refs(target)
    else:
        if storage_options:
            raise TypeError("storage_options apply to URLs, not to local paths")
        text, _ = _native.kerchunk_refs(os.fspath(path), target)
    return json.loads(text)
