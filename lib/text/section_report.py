"""How well a document was read: policies and paragraphs found, the share of text cited only by chapter or
page, and the policies its contents pages list that no section holds (named, so a reader can check them).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from lib.models import FALLBACK_KINDS
from lib.text.policy_codes import code_key
from lib.text.sections import SectionReading


class SectionReport(BaseModel):
    policies: int = Field(description="Policy sections (repeats of one code, e.g. a monitoring table, once)")
    paragraphs: int
    fallback_share: float = Field(description="Share of the text in chapter, appendix, page and front-matter sections")
    listed_policies: int = Field(description="Policies the contents pages list")
    missing_policies: list[str] = Field(default_factory=list, description="Listed policies no section holds")

    def summary(self) -> str:
        """One line for the revision's status and the CLI: ``42 policies, 233 paragraphs, 12% by chapter/page``."""
        text = f"{self.policies} policies, {self.paragraphs} paragraphs"
        text += f", {self.fallback_share:.0%} of text by chapter/page"
        if self.listed_policies:
            found = self.listed_policies - len(self.missing_policies)
            text += f"; contents lists {self.listed_policies} policies, {found} found"
            if self.missing_policies:
                text += " (missing: " + ", ".join(self.missing_policies) + ")"
        return text


def report_reading(reading: SectionReading) -> SectionReport:
    sections = reading.sections
    total = sum(len(section.text) for section in sections) or 1
    fallback = sum(len(section.text) for section in sections if section.kind in FALLBACK_KINDS)
    found = {code_key(section.section_ref.split(" (")[0]) for section in sections if section.kind == "policy"}
    missing = [listed.ref for listed in reading.listed if code_key(listed.ref) not in found]
    return SectionReport(
        policies=len(found),
        paragraphs=sum(section.kind == "paragraph" for section in sections),
        fallback_share=round(fallback / total, 4),
        listed_policies=len(reading.listed),
        missing_policies=missing,
    )
