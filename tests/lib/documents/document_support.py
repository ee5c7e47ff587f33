"""Helpers shared by the application-document tests: stores of their own, and what "nothing stored" means."""

from __future__ import annotations

import shutil
from pathlib import Path

import pymupdf
import redis

from lib.composition import Stores
from tests.fixtures_paths import SCANNED_WITH_TEXT_LAYER_PDF

REF = "25/01178/REM"


def inbox(stores: Stores) -> Path:
    return stores.settings.files.allowed_roots[0]


def put_in_inbox(stores: Stores, source: Path, name: str | None = None) -> Path:
    target = inbox(stores) / (name or source.name)
    shutil.copyfile(source, target)
    return target


def write_in_inbox(stores: Stores, name: str, data: bytes) -> Path:
    target = inbox(stores) / name
    target.write_bytes(data)
    return target


def stored_keys(client: redis.Redis) -> list[str]:
    """Every application-document key in Redis: records, indexes and claims. The generation counters
    (``appdoc_gen``, ``appdoc_gen:{ref}``) are left out: they outlive the documents on purpose."""
    return sorted(key for key in client.scan_iter("appdoc*") if not key.startswith("appdoc_gen"))


def stored_files(stores: Stores) -> list[str]:
    return list(stores.objects.list("applications/"))


def assert_nothing_stored(stores: Stores, client: redis.Redis) -> None:
    assert stored_keys(client) == []
    assert stores.documents.chunks.count() == 0
    assert stored_files(stores) == []


def scanned_pages(pages: int, dpi: int = 150) -> pymupdf.Document:
    """Pages of the Vicksburg scan with the OCR text layer thrown away (what a scanner without OCR makes)."""
    scan = pymupdf.open()
    with pymupdf.open(SCANNED_WITH_TEXT_LAYER_PDF) as source:
        for page in list(source)[:pages]:
            target = scan.new_page(width=page.rect.width, height=page.rect.height)
            target.insert_image(target.rect, pixmap=page.get_pixmap(dpi=dpi))
    return scan
