"""How well real development plans are read into citable sections (issue 22).

Per document: the policies its contents pages list, how many of those were found with their text and on
their heading page (the section's printed page, or PDF page where the plan prints none, equals the page
the contents page gives), policies, paragraphs and main modifications found, the share of text cited only by
chapter or page (fallback), seconds to extract and to cut sections, and paragraph refs whose number the
paragraph does not print (invented: the goal is zero). The documents are read where they lie (their licence is
not stated: never copy them into the repository).

A policy is on its heading page when its section starts on the page the contents page gives, or when a heading
naming the same code does: plans that open a topic with ``LP06 - Supported Housing`` and print the policy box
after its reasoned justification list the topic's page (Babergh and Mid Suffolk). Both counts are printed.

``--questions``: each plan that ``benchmarks/plan_questions.json`` asks about is ingested through the product's
own path (``register_revision`` + ``ingest_revision``, category ``local_plan``) into a store under
``--data-dir``, and every plain-language question goes through ``search_policy`` (hybrid, that plan only,
top 5); a hit is a result whose ``section_ref`` is the policy that answers it (and, looser, a paragraph that
supports that policy).

    .venv/bin/python benchmarks/sections.py --data ../shared/data/local_plans [--data deployments/seed] [--questions]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
warnings.filterwarnings("ignore", category=FutureWarning)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from lib.composition import open_stores  # noqa: E402
from lib.config import load_settings  # noqa: E402
from lib.models import Section  # noqa: E402
from lib.policies.ingest import ingest_revision  # noqa: E402
from lib.policies.lifecycle import register_revision  # noqa: E402
from lib.policies.models import PolicyCreate, RevisionCreate  # noqa: E402
from lib.policies.search import search_policy  # noqa: E402
from lib.policies.stores import PolicyStores  # noqa: E402
from lib.stores.redis_server import stop_embedded_redis  # noqa: E402
from lib.text.contents import ListedPolicy  # noqa: E402
from lib.text.extraction import extract_document  # noqa: E402
from lib.text.policy_codes import POLICY_HEADING_RE, code_key  # noqa: E402
from lib.text.section_report import report_reading  # noqa: E402
from lib.text.sections import read_sections  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from section_lookups import BOUND, Tally, bound_watford, expectations, items, tally  # noqa: E402

MIN_POLICY_TEXT = 40
"""A policy found "with its text" holds at least this many characters beyond its heading line."""
QUESTIONS = ROOT / "benchmarks" / "plan_questions.json"


def _heading_code(title: str) -> str:
    """The code a heading starts with (``LP06 - Supported ...`` -> ``LP06``), or ``""``."""
    match = POLICY_HEADING_RE.match(title)
    return code_key(match["code"]) if match else ""


def _page(section: Section) -> int:
    first = str(section.printed_page or "").split("-")[0]
    return int(first) if first.isdigit() else section.page_number


def found_exactly(listed: ListedPolicy, sections: list[Section], *, topic_heading: bool = False) -> bool:
    """The listed policy has a section with text, starting on the page the contents page gives (or, with
    ``topic_heading``, a heading that names the same code stands on that page: the title of the units there)."""
    key = code_key(listed.ref)
    topic_pages = {_page(section) for section in sections if topic_heading and _heading_code(section.title) == key}
    for section in sections:
        if section.kind != "policy" or code_key(section.section_ref.split(" (")[0]) != key:
            continue
        body = section.text.split("\n", 1)[1] if "\n" in section.text else section.text[len(section.title) + 12 :]
        on_page = listed.printed_page is None or _page(section) == listed.printed_page
        if len(body.strip()) >= MIN_POLICY_TEXT and (on_page or listed.printed_page in topic_pages):
            return True
    return False


def invented(sections: list[Section]) -> int:
    """Paragraph refs whose number the paragraph does not itself print first (the goal is zero)."""
    return sum(
        section.kind == "paragraph"
        and not section.text.startswith(section.section_ref.split("Para ")[-1].split(" (")[0])
        for section in sections
    )


def source_of(pdf: Path) -> str:
    """A policy slug from a file name (``fenland_local_plan_adopted_2014.pdf`` -> ``FENLAND_LOCAL_PLAN_...``)."""
    return "".join(ch if ch.isalnum() else "_" for ch in pdf.stem.upper())[:64]


def ask_questions(pdfs: list[Path], data_dir: Path) -> None:
    questions = json.loads(QUESTIONS.read_text())
    by_name = {pdf.name: pdf for pdf in pdfs}
    asked = [q for q in questions if q["file"] in by_name]
    if not asked:
        print(f"\nno plan that {QUESTIONS.name} asks about is in --data")
        return
    settings = load_settings(data_dir=data_dir, redis_url=None)
    stores = open_stores(settings).policies
    stores.embedder.query_cache_size = 0
    try:
        for name in sorted({q["file"] for q in asked}):
            ingest_plan(stores, by_name[name])
        for name in ("development", "check"):
            ask(stores, [q for q in asked if q.get("set", "development") == name], name, by_name)
    finally:
        stop_embedded_redis(settings.paths.redis_dir)


def ask(
    stores: PolicyStores,
    questions: list[dict[str, str]],
    name: str,
    by_name: dict[str, Path],
) -> None:
    """Ask one set of questions; print the misses and the two hit rates."""
    if not questions:
        return
    hits = loose = 0
    print(f"\n{name} questions ({len(questions)}): hybrid search_policy, that plan only, top 5")
    for q in questions:
        source = source_of(by_name[q["file"]])
        results = search_policy(stores, q["question"], sources=[source], n_results=5, mode="hybrid").results
        refs = [r.section_ref for r in results]
        hit = q["policy"] in refs
        near = hit or any(r.supports == q["policy"] for r in results)
        hits += hit
        loose += near
        if not hit:
            print(f"  miss  {q['policy']:<14} {q['question'][:60]:<60} -> {', '.join(refs)}")
    n = len(questions)
    print(
        f"cites the policy in the top 5: {hits}/{n} ({hits / n:.1%}); "
        f"the policy or a paragraph supporting it: {loose}/{n} ({loose / n:.1%})"
    )


def ingest_plan(stores: PolicyStores, pdf: Path) -> None:
    """Ingest ``pdf`` as a local plan unless the store already holds it (a rerun only asks)."""
    source = source_of(pdf)
    if source in stores.registry.snapshot().sources:
        return
    stores.registry.create_policy(PolicyCreate(source=source, title=pdf.stem.replace("_", " "), category="local_plan"))
    created = register_revision(
        stores, source, RevisionCreate(version_label=pdf.stem, effective_from=date(2000, 1, 1)), pdf.read_bytes()
    )
    started = time.perf_counter()
    outcome = ingest_revision(stores, source, created.revision.revision_id)
    print(f"  ingested {pdf.name}: {outcome.chunks_created} chunks in {time.perf_counter() - started:.1f} s")


def documents(pdfs: list[Path]) -> list[tuple[str, bytes]]:
    """Each PDF, and the issue-44 bound report where both its halves are among them."""
    found = [(pdf.name, pdf.read_bytes()) for pdf in pdfs]
    for folder in sorted({pdf.parent for pdf in pdfs}):
        bound = bound_watford(folder)
        if bound is not None:
            found.append((BOUND, bound))
    return found


def measure(name: str, data: bytes, expected: dict[str, dict[str, list[dict[str, str | int]]]]) -> list[Tally]:
    """Print one document's row; return its policies' and numbered items' tallies (expected, found, exact)."""
    started = time.perf_counter()
    document = extract_document(data, enable_ocr=False)
    extracted = time.perf_counter()
    reading = read_sections(document)
    sectioned = time.perf_counter()
    report = report_reading(reading)
    exact = sum(found_exactly(listed, reading.sections) for listed in reading.listed)
    topic = sum(found_exactly(listed, reading.sections, topic_heading=True) for listed in reading.listed)
    policies = Tally(len(reading.listed), len(reading.listed) - len(report.missing_policies), topic)
    policies.add(tally(document, reading.sections, items(expected.get(name, {}), "policies")))
    numbered = Tally()
    for group in ("paragraphs", "modifications"):
        numbered.add(tally(document, reading.sections, items(expected.get(name, {}), group)))
    print(
        f"{name[:52]:<52} {document.page_count:>5} {len(reading.listed):>6} {exact:>5} {report.policies:>8} "
        f"{report.paragraphs:>6} {sum(s.kind == 'modification' for s in reading.sections):>5} "
        f"{report.fallback_share:>8.0%} {extracted - started:>9.2f} {sectioned - extracted:>10.2f} "
        f"{invented(reading.sections):>8} {_tally(policies):>14} {_tally(numbered):>14}"
    )
    if report.missing_policies:
        print(f"    not found: {', '.join(report.missing_policies)}")
    inexact = [
        p.ref
        for p in reading.listed
        if p.ref not in report.missing_policies and not found_exactly(p, reading.sections, topic_heading=True)
    ]
    if inexact:
        print(f"    found, not on the listed page or without text: {', '.join(inexact)}")
    if topic > exact:
        print(f"    {topic - exact} listed at the page of their topic heading, the policy box a page or two on")
    return [policies, numbered, Tally(len(reading.listed), exact, topic)]


def _tally(counts: Tally) -> str:
    return f"{counts.expected}/{counts.found}/{counts.exact}" if counts.expected else "-"


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.1%})" if whole else "0/0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", action="append", type=Path, default=[], help="a folder of PDFs (repeatable)")
    parser.add_argument("--questions", action="store_true", help="also ingest the plans and ask the questions")
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".bench" / "sections")
    args = parser.parse_args()
    folders = args.data or [ROOT.parent / "shared" / "data" / "local_plans", ROOT / "deployments" / "seed"]
    pdfs = sorted(pdf for folder in folders for pdf in folder.glob("*.pdf"))
    header = (
        f"{'document':<52} {'pages':>5} {'listed':>6} {'exact':>5} {'policies':>8} {'paras':>6} {'mods':>5} "
        f"{'fallback':>8} {'extract s':>9} {'sections s':>10} {'invented':>8} {'policies e/f/x':>14} "
        f"{'numbered e/f/x':>14}"
    )
    print(header)
    print("-" * len(header))
    expected = expectations()
    policies, numbered, listed = Tally(), Tally(), Tally()
    for name, data in documents(pdfs):
        policy_tally, numbered_tally, listed_tally = measure(name, data, expected)
        policies.add(policy_tally)
        numbered.add(numbered_tally)
        listed.add(listed_tally)
    print("\ne/f/x: expected, found, looked up exactly (found with its text on its own page)")
    if listed.expected:
        print(
            f"policies listed by contents pages: {listed.expected}; found exactly: "
            f"{_share(listed.found, listed.expected)} on the policy's own page, "
            f"{_share(listed.exact, listed.expected)} on it or its topic heading's"
        )
    print(
        f"policies expected: {policies.expected}; found {_share(policies.found, policies.expected)}; "
        f"exact {_share(policies.exact, policies.expected)}"
    )
    print(
        f"numbered paragraphs and modification codes expected: {numbered.expected}; "
        f"found {_share(numbered.found, numbered.expected)}; "
        f"exact {_share(numbered.exact, numbered.expected)}"
    )
    if args.questions:
        ask_questions(pdfs, args.data_dir)


if __name__ == "__main__":
    main()
