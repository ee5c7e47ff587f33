"""The product of one int8 query with int8 vector columns, on onnxruntime's ``MatMulInteger``.

Why onnxruntime: numpy has no int8 matrix kernel (its integer products run a plain loop), and converting int8
columns to float32 per search costs more than the float32 product they replace. onnxruntime is already loaded
for the query encoder; its unsigned-by-signed 8-bit kernel is faster than numpy's float32 product, reading a
quarter of the bytes. The query is sent as ``uint8`` (its codes plus 128) because that kernel is the fast one
(signed-by-signed took several times as long), and without a zero point, which would make the kernel sum every
column again on every call: the caller subtracts ``128 * column sum``, computed once per slice (``offsets``).
The integer result is exact, so the only approximation is the quantisation, which the caller bounds. Figures:
decision 0037.

A slice's columns are read once in order before the product (``_touch``): the kernel reads a slice in panels of a few
columns across every dimension, a stride the hardware prefetcher does not follow, so on columns not in cache it
waited on memory several times as long as on cached ones; a sequential pass first brings them in at the memory's
streaming rate (figures: decision 0038).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import onnxruntime

ZERO_POINT = 128


@cache
def _session() -> onnxruntime.InferenceSession:
    """One session for the process (``run`` may be called from many threads at once), built from a graph of
    one node, on one intra-op thread: searches run side by side on threads of their own. Two threads may both
    build it first; either session is as good."""
    import onnxruntime
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["query", "columns"], ["scores"])],
        "int8_product",
        [
            helper.make_tensor_value_info("query", TensorProto.UINT8, [1, None]),
            helper.make_tensor_value_info("columns", TensorProto.INT8, [None, None]),
        ],
        [helper.make_tensor_value_info("scores", TensorProto.INT32, [1, None])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def query_codes(codes: np.ndarray) -> np.ndarray:
    """Signed int8 query codes as the ``(1, dims)`` uint8 row ``int8_scores`` takes (plus ``ZERO_POINT``)."""
    return (codes.astype(np.int16) + ZERO_POINT).astype(np.uint8).reshape(1, -1)


def column_offsets(columns: np.ndarray) -> np.ndarray:
    """What ``int8_scores`` subtracts per column: ``ZERO_POINT`` times its sum, int32."""
    return columns.sum(axis=0, dtype=np.int32) * np.int32(ZERO_POINT)


def int8_scores(
    query: np.ndarray, columns: np.ndarray, offsets: np.ndarray, out: np.ndarray | None = None
) -> np.ndarray:
    """``codes @ columns`` as int32, one per column, exact: ``query`` is ``query_codes(codes)``, ``columns`` a
    ``(dims, n)`` int8 array (copied first if not C-contiguous) and ``offsets`` its ``column_offsets``. Written
    into ``out`` (``n`` contiguous int32) when given, else a fresh array."""
    if columns.shape[1] == 0:
        return np.zeros(0, dtype=np.int32)
    columns = np.ascontiguousarray(columns)  # a slice's columns in a page (lib.retrieval.code_pages) are a view
    if columns.nbytes <= TOUCH_BYTES:
        _touch(columns)
    if out is None:
        (scores,) = _session().run(None, {"query": query, "columns": columns})
        scores = np.asarray(scores, dtype=np.int32).reshape(-1)
    else:
        scores = out
        _run_into(query, columns, scores)
    scores -= offsets
    return scores


def _run_into(query: np.ndarray, columns: np.ndarray, out: np.ndarray) -> None:
    """The product written straight into ``out`` (onnxruntime's I/O binding): no array of its own to allocate and
    copy out (``lib.retrieval.scratch``)."""
    if out.dtype != np.int32 or out.shape != (columns.shape[1],) or not out.flags.c_contiguous:
        raise ValueError(f"out must be {columns.shape[1]} contiguous int32, not {out.shape} {out.dtype}")
    session = _session()
    binding = session.io_binding()
    binding.bind_cpu_input("query", query)
    binding.bind_cpu_input("columns", columns)
    binding.bind_output("scores", "cpu", 0, np.int32, [1, columns.shape[1]], out.ctypes.data)
    session.run_with_iobinding(binding)


TOUCH_BYTES = 1 << 20
"""Columns up to this size are read in order before the product (``_touch``): they stay in the core's cache
until the kernel reads them. A wider array (a page of ``lib.retrieval.code_pages``) would be evicted first, and
reading it twice only costs more (decision 0039)."""
_LINE = 64
"""Bytes in a cache line: ``_touch`` reads one of each."""


def _touch(columns: np.ndarray) -> None:
    """Read one byte of every cache line of ``columns``, in order, so the product finds them in cache."""
    columns.reshape(-1)[::_LINE].max()
