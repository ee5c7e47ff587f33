"""Shared stores: Redis, Chroma, the object store and the embedding model."""
