"""Retrieval shared by every search: the corpus index (one slice of a collection in memory, tied to its Redis
stamp: ``corpus_index``, ``index_cache``, ``index_loader``, ``corpus``), the dense leg (``dense``), the lexical
leg (``tokens``, ``heading``, ``lexical``, ``segments``), and one ranking per mode (``ranking``, ``fusion``).
Every search applies its filters by choosing which slices and rows both legs see, so they agree before ranking.
"""

from lib.retrieval.fusion import FUSION, FusedHit, FusionMethod, FusionParams, candidates, fuse
from lib.retrieval.lexical import LexicalBlock, LexicalHit, LexicalRanking, bm25_ceiling, bm25_rank, bm25_search
from lib.retrieval.modes import SearchMode, check_mode
from lib.retrieval.ranking import RankedChunk, collapse, leg_depth, rank_by_mode, rank_chunks
from lib.retrieval.tokens import tokenize

__all__ = [
    "FUSION",
    "FusedHit",
    "FusionMethod",
    "FusionParams",
    "LexicalBlock",
    "LexicalHit",
    "LexicalRanking",
    "RankedChunk",
    "SearchMode",
    "bm25_ceiling",
    "bm25_rank",
    "bm25_search",
    "candidates",
    "check_mode",
    "collapse",
    "fuse",
    "leg_depth",
    "rank_by_mode",
    "rank_chunks",
    "tokenize",
]
