"""Policies with revisions in time (specs 000/001): registry, temporal rules, search, ingestion."""
