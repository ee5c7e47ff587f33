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

On a CPU without AVX2 onnxruntime's unsigned-by-signed kernel saturates, so the kernel is checked on a probe
once per process and, where it fails, the query is split into two rows that cannot saturate (``_kernel``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import onnxruntime

logger = logging.getLogger(__name__)

ZERO_POINT = 128
"""The shift that makes signed query codes unsigned for the fast kernel."""


@dataclass(frozen=True)
class _Kernel:
    """How the product is run: a session (uint8 or int8 query rows by int8 columns), the shift added to the
    query's codes, and whether the query is split into its positive and negative parts, two rows of 0..127."""

    name: str
    session: onnxruntime.InferenceSession
    shift: int = 0
    split: bool = False


@cache
def _kernel() -> _Kernel:
    """The first exact kernel, for the process (``run`` may be called from many threads at once), each on one
    intra-op thread: searches run side by side on threads of their own. Each is checked on a probe first:
    onnxruntime's unsigned-by-signed kernel without AVX2 (1.31, SSE4.1) adds byte pairs into saturating 16-bit
    sums, so a shifted query (up to 255) comes out wrong there, while a query split into two rows of at most 127
    cannot saturate and costs two runs; the signed-by-signed kernel is exact everywhere but far slower (figures:
    decision 0037). Two threads may both choose first; either choice is as good."""
    unsigned = _session(unsigned_query=True)
    candidates: tuple[Callable[[], _Kernel], ...] = (  # made in turn: the signed session only if it is needed
        lambda: _Kernel("uint8_by_int8", unsigned, shift=ZERO_POINT),
        lambda: _Kernel("uint8_by_int8_split", unsigned, split=True),
        lambda: _Kernel("int8_by_int8", _session(unsigned_query=False)),
    )
    columns = _probe_columns()
    probes = (np.full(columns.shape[0], 127, np.int8), np.full(columns.shape[0], -127, np.int8), columns[:, 2])
    for position, make in enumerate(candidates):
        kernel = make()
        if all(_exact(kernel, codes, columns) for codes in probes):
            if position:
                logger.warning("retrieval.int8_kernel inexact=uint8_by_int8 using=%s", kernel.name)
            return kernel
    raise RuntimeError("no exact int8 product on this CPU")  # the last candidate is exact by onnxruntime's spec


def _exact(kernel: _Kernel, codes: np.ndarray, columns: np.ndarray) -> bool:
    expected = codes.astype(np.int64) @ columns.astype(np.int64)
    got = _scores(kernel, _query(kernel, codes), columns, _offsets(kernel, columns), None)
    return bool(np.array_equal(got, expected))


def _probe_columns() -> np.ndarray:
    """Columns that cover the code range at every dimension the product is run on (384 for MiniLM), including
    its extremes, where a saturating kernel goes wrong first."""
    columns = np.random.default_rng(0).integers(-127, 128, (384, 64), dtype=np.int8)
    columns[:, 0], columns[:, 1] = 127, -127
    return columns


def _session(*, unsigned_query: bool) -> onnxruntime.InferenceSession:
    """A session of one ``MatMulInteger`` node: a uint8 (or int8) query row by int8 columns, int32 out."""
    import onnxruntime
    from onnx import TensorProto, helper

    query_type = TensorProto.UINT8 if unsigned_query else TensorProto.INT8
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["query", "columns"], ["scores"])],
        "int8_product",
        [
            helper.make_tensor_value_info("query", query_type, [1, None]),
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
    """Signed int8 query codes as the rows ``int8_scores`` takes for this CPU's kernel."""
    return _query(_kernel(), codes)


def column_offsets(columns: np.ndarray) -> np.ndarray:
    """What ``int8_scores`` subtracts per column: the query's shift times the column's sum, int32."""
    return _offsets(_kernel(), columns)


def int8_scores(
    query: np.ndarray, columns: np.ndarray, offsets: np.ndarray, out: np.ndarray | None = None
) -> np.ndarray:
    """``codes @ columns`` as int32, one per column, exact: ``query`` is ``query_codes(codes)``, ``columns`` a
    ``(dims, n)`` int8 array (copied first if not C-contiguous) and ``offsets`` its ``column_offsets``. Written
    into ``out`` (``n`` contiguous int32) when given, else a fresh array."""
    return _scores(_kernel(), query, columns, offsets, out)


def _query(kernel: _Kernel, codes: np.ndarray) -> np.ndarray:
    if kernel.split:
        wide = codes.astype(np.int16)
        return np.stack([np.maximum(wide, 0), np.maximum(-wide, 0)]).astype(np.uint8)
    if kernel.shift:
        return (codes.astype(np.int16) + kernel.shift).astype(np.uint8).reshape(1, -1)
    return np.ascontiguousarray(codes, dtype=np.int8).reshape(1, -1)


def _offsets(kernel: _Kernel, columns: np.ndarray) -> np.ndarray:
    return columns.sum(axis=0, dtype=np.int32) * np.int32(kernel.shift)


def _scores(
    kernel: _Kernel, query: np.ndarray, columns: np.ndarray, offsets: np.ndarray, out: np.ndarray | None
) -> np.ndarray:
    if columns.shape[1] == 0:
        return np.zeros(0, dtype=np.int32)
    columns = np.ascontiguousarray(columns)  # a slice's columns in a page (lib.retrieval.code_pages) are a view
    if columns.nbytes <= TOUCH_BYTES:
        _touch(columns)
    if out is None:
        (scores,) = kernel.session.run(None, {"query": query[:1], "columns": columns})
        scores = np.asarray(scores, dtype=np.int32).reshape(-1)
    else:
        scores = out
        _run_into(kernel.session, query[:1], columns, scores)
    if kernel.split:
        (negative,) = kernel.session.run(None, {"query": query[1:], "columns": columns})
        scores -= negative.reshape(-1)
    scores -= offsets
    return scores


def _run_into(session: onnxruntime.InferenceSession, query: np.ndarray, columns: np.ndarray, out: np.ndarray) -> None:
    """The product written straight into ``out`` (onnxruntime's I/O binding): no array of its own to allocate and
    copy out (``lib.retrieval.scratch``)."""
    if out.dtype != np.int32 or out.shape != (columns.shape[1],) or not out.flags.c_contiguous:
        raise ValueError(f"out must be {columns.shape[1]} contiguous int32, not {out.shape} {out.dtype}")
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
