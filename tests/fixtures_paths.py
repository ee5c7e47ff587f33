"""Paths of the real files under ``tests/fixtures`` (origins and licences in ``tests/fixtures/README.md``)."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
PDFS = FIXTURES / "pdfs"
POLICIES = Path(__file__).parents[1] / "deployments" / "seed"

NPPF_2024 = POLICIES / "NPPF_December_2024.pdf"
DRAFT_NPPF_2025 = POLICIES / "Draft_NPPF_December_2025.pdf"
SEED_FILE = POLICIES / "seed.yaml"

EMPTY_PDF = PDFS / "empty_zero_bytes_pdfplumber.pdf"
ENCRYPTED_AES256_PDF = PDFS / "encrypted_aes256_pypdf_crazyones.pdf"
ENCRYPTED_PASSWORD_PDF = PDFS / "encrypted_pdfplumber_password-example.pdf"
IMAGE_ONLY_PDF = PDFS / "image_only_pypdf_imagemagick-images.pdf"
MALFORMED_PDF = PDFS / "malformed_pdfplumber_issue-932.pdf"
SCANNED_WITH_TEXT_LAYER_PDF = PDFS / "scanned_ocr_pypdf_Seige_of_Vicksburg.pdf"
TABLE_PDF = PDFS / "table_pdfplumber_senate-expenditures.pdf"
