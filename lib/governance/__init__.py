"""Governance documents (spec 004): ADRs, PRDs, PEPs and other decision records, searched by agents."""
