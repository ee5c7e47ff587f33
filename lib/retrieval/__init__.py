"""Retrieval shared by every search: the modes, the lexical leg (tokens, BM25 over blocks) and the fusion.

The dense leg stays with each store (``lib.stores.block_cache.exact_search`` over revision blocks, Chroma's
query as the fallback); this package adds what ranks by words and codes and what fuses the two. Every
search applies its filters by choosing which blocks both legs see, so they agree before ranking.
"""

from lib.retrieval.fusion import FUSION, FusedHit, FusionMethod, FusionParams, candidates, fuse
from lib.retrieval.lexical import LexicalBlock, LexicalHit, LexicalRanking, bm25_ceiling, bm25_rank, bm25_search
from lib.retrieval.modes import SearchMode, check_mode
from lib.retrieval.ranking import leg_depth, rank_by_mode
from lib.retrieval.tokens import tokenize

__all__ = [
    "FUSION",
    "FusedHit",
    "FusionMethod",
    "FusionParams",
    "LexicalBlock",
    "LexicalHit",
    "LexicalRanking",
    "SearchMode",
    "bm25_ceiling",
    "bm25_rank",
    "bm25_search",
    "candidates",
    "check_mode",
    "fuse",
    "leg_depth",
    "rank_by_mode",
    "tokenize",
]
