"""earthkit-data's three reader functions for Tensogram content: a file
(:func:`reader`), bytes in memory (:func:`memory_reader`) and a stream
(:func:`stream_reader`)."""

from .file import reader
from .memory import memory_reader
from .stream import stream_reader

__all__ = ["memory_reader", "reader", "stream_reader"]
