"""Application documents (spec 003): registry, chunks, classification, ingestion, reads."""
