"""The text pipeline: extraction (with OCR), citable sections, chunking."""
