"""Local-plan layouts as small real PDFs written with PyMuPDF, one feature each place it matters:

- a contents page (``Policy LP1 - Housing ........ 3``) listing one policy the plan never prints (``LP9``);
- a running header and printed page numbers one less than the PDF's (the cover is unnumbered);
- decimal paragraph numbers (``3.1``), whole-numbered clauses inside policies;
- policy headings in three notations: ``Policy LP1 - Housing`` (bold), ``CS 1`` with the policy's text
  on the heading line (only the code bold), ``Policy H2: Affordable Housing``;
- a policy continued over a page break, and its reasoned justification after it;
- a landscape page holding two printed pages (a spread) with a boxed policy on its right-hand page,
  followed by unnumbered text outside the box;
- an inspector's report: paragraphs 1..N under unnumbered headings, no numbered chapters;
- a plan whose chapters each open a page in large type with headings alike but for their numbers
  (``2. Sub-area 2``), whose paragraphs skip a number, whose policy heading is repeated over a page break
  (``(continued)``) and named again in a monitoring table at the end;
- pages set in two columns with one printed page number each, centred below both;
- an inspector's schedule of main modifications: ``MM1`` .. ``MM7`` rows, one quoting a policy and another a
  decimal-numbered paragraph of the plan it changes (``AAP/MM1`` .. where one examination changes several plans);
- that report with that schedule bound in at the back (``bound_report_pdf``), and a report whose schedule starts
  on its last page, under a bold ``Schedule of Main Modifications`` right after its last paragraph;
- a core strategy printing each policy as a bold ``Policy`` label over its bold code, the policy's first words on
  the code's line (``CS 1 Development ...``), one policy heading set right under a bold table caption, and one
  level with a diagram's bold caption across the page (read as one row), as its contents page lists it;
- a plan with a glossary (bold ``Term:`` entries, one led by a policy code) and an appendix of whole-numbered
  items bound after its decimal-numbered body.
"""

from __future__ import annotations

import textwrap

import pymupdf

WIDTH, HEIGHT = 595, 842
LEFT, TOP, BOTTOM = 60, 90, 760
BODY, LINE, GAP = 10, 13, 12
HEADER = "Example District Local Plan 2020-2040"
WRAP = 88

LP1_CLAUSES = [
    "1. New homes will be permitted within settlement boundaries where they respect the character of the area.",
    "2. Outside settlement boundaries new homes will be permitted only where a rural need is shown.",
    "3. Every scheme of ten homes or more will provide a mix of sizes informed by the housing needs study.",
] + [
    "Proposals will also be judged against the design code, the parking standards and the open space "
    "standards, and against any neighbourhood plan in force, so that each scheme adds to the place it joins. " * 2
] * 14


class Writer:
    """Writes lines down a page, starting a new page (with header and printed number) when one is full."""

    def __init__(self, doc: pymupdf.Document, printed_offset: int = -1) -> None:
        self.doc = doc
        self.offset = printed_offset
        self.page: pymupdf.Page | None = None
        self.y = 0.0

    def new_page(self) -> None:
        self.page = self.doc.new_page(width=WIDTH, height=HEIGHT)
        number = self.doc.page_count + self.offset
        self.page.insert_text((LEFT, 40), HEADER, fontsize=8, fontname="helv")
        self.page.insert_text((WIDTH / 2, HEIGHT - 30), str(number), fontsize=9, fontname="helv")
        self.y = TOP

    def line(self, text: str, *, size: float = BODY, bold: bool = False, indent: float = 0) -> None:
        if self.page is None or self.y > BOTTOM:
            self.new_page()
        assert self.page is not None
        self.page.insert_text((LEFT + indent, self.y), text, fontsize=size, fontname="hebo" if bold else "helv")
        self.y += max(LINE, size * 1.3)

    def paragraph(self, text: str, *, bold_lead: str = "") -> None:
        for index, line in enumerate(textwrap.wrap(text, WRAP)):
            if index == 0 and bold_lead and line.startswith(bold_lead):
                self._bold_then_plain(bold_lead, line[len(bold_lead) :])
            else:
                self.line(line)
        self.y += GAP

    def _bold_then_plain(self, bold: str, rest: str) -> None:
        if self.page is None or self.y > BOTTOM:
            self.new_page()
        assert self.page is not None
        self.page.insert_text((LEFT, self.y), bold, fontsize=BODY, fontname="hebo")
        width = pymupdf.get_text_length(bold, fontname="hebo", fontsize=BODY)
        self.page.insert_text((LEFT + width, self.y), rest, fontsize=BODY, fontname="helv")
        self.y += LINE

    def gap(self, points: float = GAP) -> None:
        self.y += points


def local_plan_pdf() -> bytes:
    """Cover, contents, then chapter 3 with three policies (see the module docstring)."""
    doc = pymupdf.open()
    cover = doc.new_page(width=WIDTH, height=HEIGHT)
    cover.insert_text((LEFT, 300), "Example District Local Plan", fontsize=28, fontname="hebo")
    writer = Writer(doc)
    writer.new_page()
    writer.line("Contents", size=20, bold=True)
    writer.gap()
    for entry, page in [
        ("3. Housing", 2),
        ("Policy LP1 - Housing", 2),
        ("Policy CS 1 - Settlement Strategy", 4),
        ("Policy H2: Affordable Housing", 4),
        ("Policy LP9 - Green Belt", 5),
        ("Appendix A - Glossary", 6),
    ]:
        writer.line(f"{entry} {'.' * (70 - len(entry))} {page}")
    writer.new_page()
    writer.line("3. Housing", size=18, bold=True)
    writer.gap()
    writer.paragraph(
        "3.1 This chapter sets out how the plan meets the need for new homes over the plan period, in the "
        "towns and in the villages, and how the type and size of those homes is decided."
    )
    writer.line("Policy LP1 - Housing", size=12, bold=True)
    writer.gap(4)
    for clause in LP1_CLAUSES:
        writer.paragraph(clause)
    writer.paragraph(
        "3.2 Policy LP1 follows the housing needs study. Its clauses apply to every application for new homes, "
        "and the supporting text explains the evidence behind each threshold."
    )
    writer.paragraph(
        "3.3 The settlement strategy decides where growth goes, so that most new homes are close to services."
    )
    writer.paragraph(
        "CS 1 The Council will direct new development to the market towns first, then to the key service "
        "centres, and only then to the villages named in the settlement hierarchy.",
        bold_lead="CS 1",
    )
    writer.paragraph("3.4 Policy CS 1 keeps growth where people can reach jobs and services without a car.")
    writer.line("Policy H2: Affordable Housing", size=12, bold=True)
    writer.gap(4)
    writer.paragraph("Sites of ten homes or more will provide thirty per cent of the homes as affordable housing.")
    writer.paragraph("3.5 Affordable housing is needed in every parish of the district.")
    return doc.tobytes()


SPREAD_WIDTH, SPREAD_HEIGHT = 1190, 842
HALF = SPREAD_WIDTH / 2


def spread_pdf() -> bytes:
    """A cover, then one landscape page holding printed pages 34 (left) and 35 (right): the left page ends
    paragraph 5.1's chapter text, the right holds ``HOU2   Housing Density`` in a box."""
    doc = pymupdf.open()
    for number in (1, 2):
        page = doc.new_page(width=WIDTH, height=HEIGHT)
        page.insert_text((LEFT, 300), f"Example Core Strategy, part {number}", fontsize=24, fontname="hebo")
    spread = doc.new_page(width=SPREAD_WIDTH, height=SPREAD_HEIGHT)
    left_lines = [("5. Housing", 18.0, True)]
    for number in range(1, 5):
        left_lines += [
            (f"5.{number} The core strategy plans for the homes the four boroughs need, on land already", 10.0, False),
            ("used, close to the centres and the transport corridors that link them, so that the", 10.0, False),
        ]
    right_lines = [
        ("HOU2   Housing Density, Type and Accessibility", 11.0, True),
        ("Developments will achieve at least 35 dwellings per hectare, and more in centres,", 10.0, False),
        ("unless this would harm the character of the area or the setting of heritage assets.", 10.0, False),
        ("The type and size of new homes will reflect the needs set out in the housing study,", 10.0, False),
        ("and every scheme of fifteen homes or more will include homes built to be accessible", 10.0, False),
        ("and adaptable, so that people can stay in their homes as their needs change over time.", 10.0, False),
        ("Reasoned justification follows the box, in plain type and without a number, before the next", 10.0, False),
        ("numbered paragraph: the box, not the paragraph numbering, is where the policy ends.", 10.0, False),
        ("5.5 Policy HOU2 applies to every scheme of new homes in the four boroughs.", 10.0, False),
    ]
    for x0, lines in ((40.0, left_lines), (HALF + 40.0, right_lines)):
        y = 90.0
        for index, (text, size, bold) in enumerate(lines):
            if index and (lines[index - 1][1] != size or text[:1].isdigit() or text.startswith("Reasoned")):
                y += 10
            spread.insert_text((x0, y), text, fontsize=size, fontname="hebo" if bold else "helv")
            y += size * 1.4
    box = pymupdf.Rect(HALF + 30, 76, SPREAD_WIDTH - 30, 90 + 11 * 1.4 + 10 + 5 * 14 + 2)
    spread.draw_rect(box, color=(0, 0, 0))
    spread.insert_text((HALF / 2, SPREAD_HEIGHT - 30), "34", fontsize=9, fontname="helv")
    spread.insert_text((HALF + HALF / 2, SPREAD_HEIGHT - 30), "35", fontsize=9, fontname="helv")
    return doc.tobytes()


def inspectors_report_pdf() -> bytes:
    """A cover and two pages of paragraphs numbered 1..4 under unnumbered headings."""
    doc = pymupdf.open()
    cover = doc.new_page(width=WIDTH, height=HEIGHT)
    cover.insert_text((LEFT, 300), "Report on the Examination of the Example Local Plan", fontsize=20, fontname="hebo")
    writer = Writer(doc)
    writer.new_page()
    writer.line("Introduction", size=16, bold=True)
    writer.gap()
    for number, text in enumerate(
        ["The plan was submitted for examination in 2020.", "Hearings were held over three weeks in the spring."],
        start=1,
    ):
        writer.paragraph(f"{number}. {text} The Council asked for main modifications where needed.")
    writer.line("Assessment of Soundness", size=16, bold=True)
    writer.gap()
    for number, text in enumerate(["The housing requirement is justified.", "The Green Belt review is sound."], 3):
        writer.paragraph(f"{number}. {text} The evidence supports it.")
    return doc.tobytes()


def unstructured_pdf(pages: int = 4) -> bytes:
    """Pages of unnumbered prose under the running header, printed page numbers one less than the PDF's."""
    doc = pymupdf.open()
    doc.new_page(width=WIDTH, height=HEIGHT).insert_text((LEFT, 300), "Design Guide", fontsize=28, fontname="hebo")
    writer = Writer(doc)
    for _ in range(pages - 1):
        writer.new_page()
        writer.paragraph("Buildings should face the street and keep to the building line of their neighbours. " * 3)
    return doc.tobytes()


DM1_CLAUSES = [
    f"{n}. Development will respond to the character of the street, its building line, its materials and the "
    f"views along it, as the design code for the area sets out in its part {n}, with proportionate evidence."
    for n in range(1, 21)
]


def repeated_headings_pdf() -> bytes:
    """Three chapters, each opening a page with ``N. Sub-area N`` in 18 point type; paragraphs 1, 2, 3, 5, 6,
    7 (no 4); ``Policy DM1 - Design`` over two pages, its heading repeated at the top of the second; and a
    ``Monitoring`` table naming ``Policy DM1 - Design`` again on the last page."""
    doc = pymupdf.open()
    writer = Writer(doc, printed_offset=0)
    writer.new_page()
    writer.line("1. Sub-area 1", size=18, bold=True)
    writer.gap()
    writer.paragraph("1. The first sub-area covers the town centre and the streets around the market square.")
    writer.paragraph("2. Its character comes from narrow plots, brick frontages and the views to the church.")
    writer.line("Policy DM1 - Design", size=12, bold=True)
    writer.gap(4)
    for clause in DM1_CLAUSES:
        if writer.y > BOTTOM:
            writer.new_page()
            writer.line("Policy DM1 - Design (continued)", size=12, bold=True)
            writer.gap(4)
        writer.paragraph(clause)
    writer.line("Design quality", size=14, bold=True)
    writer.gap(4)
    writer.paragraph("3. Policy DM1 applies to every scheme, from a shop front to a new neighbourhood.")
    writer.new_page()
    writer.line("2. Sub-area 2", size=18, bold=True)
    writer.gap()
    writer.paragraph("5. The second sub-area is the river valley, with its mills, meadows and footpaths.")
    writer.paragraph("6. Development there keeps the meadows open and the footpaths along the river.")
    writer.new_page()
    writer.line("3. Sub-area 3", size=18, bold=True)
    writer.gap()
    writer.paragraph("7. The third sub-area is the countryside between the villages, farmed and open.")
    writer.line("Monitoring", size=14, bold=True)
    writer.gap(4)
    writer.line("Policy DM1 - Design", size=10, bold=True)
    writer.paragraph("Indicator: schemes reviewed by the design panel. Target: every major scheme reviewed.")
    return doc.tobytes()


MODIFICATIONS = [
    ("MM1", "Policy HO1, clause 2", ["Replace 'will be permitted' with 'will be supported'."]),
    ("MM2", "Page 12, paragraph 3.4", ["Delete the second sentence."]),
    (
        "MM3",
        "Policy HO3",
        [
            "Replace the policy with:",
            "@Policy HO3: Housing Mix",
            "Schemes of ten homes or more will provide a mix of sizes.",
        ],
    ),
    ("MM4", "Paragraph 3.5", ["Amend to read:", "3.5 Affordable housing is needed in every parish."]),
    ("MM5", "Page 20, Table 4", ["Update the housing trajectory to the 2022 figures."]),
    ("MM6", "Policy EC2", ["Add 'and storage and distribution' after 'industry'."]),
    ("MM7", "Glossary", ["Add a definition of 'first homes'."]),
]


def modifications_pdf(prefix: str = "MM", *, cover_heading: bool = True) -> bytes:
    """A cover, then the schedule: a bold header row, then one row per modification, its code (``MM1``, or
    ``prefix`` and the number) and the plan reference it changes on the first line, the change below (``@`` marks
    a quoted policy heading, set bold). Without ``cover_heading`` the cover is a line of plain text."""
    doc = pymupdf.open()
    doc.new_page(width=WIDTH, height=HEIGHT).insert_text(
        (LEFT, 300),
        "Appendix - Main Modifications" if cover_heading else "The changes the inspector recommends",
        fontsize=24 if cover_heading else BODY,
        fontname="hebo" if cover_heading else "helv",
    )
    writer = Writer(doc, printed_offset=0)
    writer.new_page()
    writer.line("MM Ref   Local Plan Ref   Modification", bold=True)
    writer.gap()
    for code, where, lines in MODIFICATIONS:
        writer.line(f"{prefix}{code.removeprefix('MM')} {where}")
        for line in lines:
            writer.line(line.removeprefix("@"), bold=line.startswith("@"))
    return doc.tobytes()


def two_column_pdf(pages: int = 3) -> bytes:
    """Pages set in two columns of decimal-numbered paragraphs (``2.1`` ..), one page number centred at the foot
    of each, two more than the PDF's (a cover and a contents page came before them in print)."""
    doc = pymupdf.open()
    number = 0
    for index in range(pages):
        page = doc.new_page(width=WIDTH, height=HEIGHT)
        page.insert_text((WIDTH / 2 - 4, HEIGHT - 30), str(index + 3), fontsize=9, fontname="helv")
        for x in (LEFT, WIDTH / 2 + 15):
            y = float(TOP + 40)
            for _ in range(4):
                number += 1
                place = ("market towns", "villages", "river valley", "station quarter")[number % 4]
                text = f"2.{number} New homes in the {place} will be built close to services, schools and stations. "
                for line in textwrap.wrap(text * 2, 42):
                    page.insert_text((x, y), line, fontsize=BODY, fontname="helv")
                    y += LINE
                y += GAP
    return doc.tobytes()


def bound_report_pdf(*, cover_heading: bool = True) -> bytes:
    """``inspectors_report_pdf`` with ``modifications_pdf`` bound in after it, as councils publish them."""
    doc = pymupdf.open(stream=inspectors_report_pdf(), filetype="pdf")
    doc.insert_pdf(pymupdf.open(stream=modifications_pdf(cover_heading=cover_heading), filetype="pdf"))
    return doc.tobytes()


def report_with_schedule_on_its_last_page_pdf() -> bytes:
    """A cover, paragraphs 1..6 under unnumbered headings, then on the same page a bold ``Schedule of Main
    Modifications``, the schedule's header row and ``MODIFICATIONS`` three times over, numbered ``MM1`` ..
    ``MM21`` (running onto a second page)."""
    doc = pymupdf.open()
    doc.new_page(width=WIDTH, height=HEIGHT).insert_text(
        (LEFT, 300), "Report on the Example Local Plan", fontsize=20, fontname="hebo"
    )
    writer = Writer(doc)
    writer.new_page()
    writer.line("Assessment of Soundness", size=16, bold=True)
    writer.gap()
    for number in range(1, 7):
        writer.paragraph(
            f"{number}. The plan's approach to issue {number} is justified by the evidence, subject to "
            "the main modifications set out below, which make it effective."
        )
    writer.line("Schedule of Main Modifications", bold=True)
    writer.gap()
    writer.line("MM Ref   Local Plan Ref   Modification", bold=True)
    writer.gap()
    for number, (_, where, lines) in enumerate(MODIFICATIONS * 3, start=1):
        writer.line(f"MM{number} {where}")
        for line in lines:
            writer.line(line.removeprefix("@"), bold=line.startswith("@"))
    return doc.tobytes()


CORE_POLICIES = [
    ("CS 1", "Development will protect and enhance the landscape, its tranquillity and its wildlife, and"),
    ("CS 2", "New homes will be built in the market towns first and then in the larger villages, so that"),
    ("CS 3", "Navigable water space will be protected, and moorings provided where they do no harm, so"),
]


def core_strategy_pdf() -> bytes:
    """A cover, then chapter 5 in decimal paragraphs; each policy is a bold ``Policy`` label, then its bold code
    with the policy's first words on the same line and no gap above it; ``CSP4 Development Outside the Growth
    Network`` is set right under a bold ``Table 3`` caption, without a gap."""
    doc = pymupdf.open()
    doc.new_page(width=WIDTH, height=HEIGHT).insert_text(
        (LEFT, 300), "Example Core Strategy", fontsize=28, fontname="hebo"
    )
    writer = Writer(doc)
    writer.new_page()
    writer.line("Contents", size=20, bold=True)
    writer.gap()
    for entry, page in [
        ("5. Core Strategy Policies", 2),
        ("CSP4 Development Outside the Growth Network", 3),
        ("CSP5 Cycling Networks", 4),
        ("Appendix 1 Monitoring", 5),
    ]:
        writer.line(f"{entry} {'.' * (70 - len(entry))} {page}")
    writer.new_page()
    writer.line("5. Core Strategy Policies", size=18, bold=True)
    writer.gap()
    for number, (code, first_words) in enumerate(CORE_POLICIES, start=1):
        writer.paragraph(
            f"5.{number} The policy below follows from the strategic objectives and the evidence "
            "gathered for the plan, and is applied together with the other policies."
        )
        writer.line("Policy", bold=True)
        writer._bold_then_plain(f"{code} ", first_words)
        writer.line("the places people value keep the character that makes them distinct from one another.")
        writer.gap()
        writer.paragraph("Proposals will be judged against these aims and against the design guidance in force.")
    writer.paragraph("5.4 The table below summarises the proposals for each regeneration corridor in turn.")
    writer.line("Table 3: A Summary of Proposals for the Regeneration Corridors (continued)", bold=True)
    writer.line("CSP4 Development Outside the Growth Network", bold=True)
    writer.gap()
    writer.paragraph(
        "Areas outside the growth network will keep their green belt and their local centres, and "
        "new homes there will be built only on land already developed."
    )
    writer.paragraph("5.5 Policy CSP4 keeps the countryside between the towns open.")
    writer.new_page()
    assert writer.page is not None
    writer.page.insert_text((LEFT, writer.y), "Cycle Network Diagram", fontsize=BODY, fontname="hebo")
    writer.page.insert_text((WIDTH / 2 + 20, writer.y), "CSP5 Cycling Networks", fontsize=BODY, fontname="hebo")
    writer.y += LINE + GAP
    writer.paragraph(
        "Joint working will give the area one cycle network, with common design standards for its "
        "routes, so that every new development links to it."
    )
    writer.paragraph("5.6 Policy CSP5 links new homes to the cycle network.")
    return doc.tobytes()


PARKING_STANDARDS = [
    "Flats: one space",
    "Houses of two bedrooms: two spaces",
    "Larger houses: three spaces",
    "Shops: one space for each 20 square metres",
    "Offices: one space for each 30 square metres",
    "Industry: one space for each 50 square metres",
    "Schools: one space for each teacher",
    "Care homes: one space for each three beds",
    "Hotels: one space for each room",
    "Cycle parking: one stand for each home",
    "Electric charging: one point for each home",
    "Visitors: one space for each four homes",
]


GLOSSARY = [
    ("Affordable housing", "homes for sale or rent for those whose needs the market does not meet."),
    ("LP4", "the fourth policy of the previous local plan, now replaced."),
    ("Settlement boundary", "the line drawn around a town or village on the policies map."),
]


def plan_with_glossary_and_appendix_pdf() -> bytes:
    """``local_plan_pdf``'s cover, contents and chapter 3, then a ``Glossary`` (bold ``Term:`` entries, one of
    them ``LP4: ...``, a code the plan never uses for a policy) and ``Appendix 1: Parking Standards``, twelve
    whole-numbered items: more numbered rows than the body has decimal ones."""
    doc = pymupdf.open(stream=local_plan_pdf(), filetype="pdf")
    writer = Writer(doc)
    writer.new_page()
    writer.line("Glossary", size=18, bold=True)
    writer.gap()
    for term, meaning in GLOSSARY:
        writer.paragraph(f"{term}: {meaning}", bold_lead=f"{term}:")
    writer.new_page()
    writer.line("Appendix 1: Parking Standards", size=18, bold=True)
    writer.gap()
    for number, item in enumerate(PARKING_STANDARDS, start=1):
        writer.paragraph(f"{number}. {item}.")
    return doc.tobytes()
