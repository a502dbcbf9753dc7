"""The documentation stands on its own (issue 25, item 4).

* No pointer to material a user does not have: the internal names of the source documents ("seed 000" ...
  "seed 004"), the design charter (DESIGN.md) or the ``shared/`` folder, in docs/, README.md, flexmb/,
  verification/, benchmarks/ and tests/. Sources are cited by author and year, listed in docs/references.md.
* Every relative Markdown link in README.md and docs/*.md names a file that exists.
* The numbered sections of every docs/*.md run in order (1, 2, 3, ...; 1.1, 1.2, ... under section 1), and every
  "<doc>.md §n" cross-reference in the docs, the README, flexmb/, verification/ and benchmarks/ names a section
  that exists.

Plain text scans: no import of flexmb, a fraction of a second.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SCANNED_SUFFIXES = {".py", ".md", ".json", ".toml", ".txt", ".rst"}

# internal names of the source documents and of the project's own charter
INTERNAL_REFERENCE = re.compile(r"\bseeds? ?0\d\d\b|\bseeds/|\bseed README\b|\bDESIGN\.md\b|(?<![\w.-])shared/",
                                re.IGNORECASE)
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
NUMBERED_HEADING = re.compile(r"^(#{2,4}) (\d+(?:\.\d+)*)\.? ", re.MULTILINE)
SECTION_REFERENCE = re.compile(r"(?:docs/)?([a-z][\w-]*)\.md\)?,? §\s?(\d+(?:\.\d+)*)")


class Hit(NamedTuple):
    """One offending place: file (relative to the repository), line number (1-based) and the text found."""
    path: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text}"


def _markdown_pages() -> list[Path]:
    return sorted(DOCS.glob("*.md")) + [ROOT / "README.md"]


def _files_under(*folders: str) -> Iterator[Path]:
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in SCANNED_SUFFIXES and "__pycache__" not in path.parts and path.is_file():
                yield path


def _scanned_files() -> Iterator[Path]:
    yield from _markdown_pages()
    yield from _files_under("flexmb", "verification")


def _hits(path: Path, pattern: re.Pattern) -> Iterator[tuple[int, re.Match]]:
    text = path.read_text(encoding="utf-8", errors="replace")
    for match in pattern.finditer(text):
        yield text.count("\n", 0, match.start()) + 1, match


def internal_references() -> list[Hit]:
    """Every mention of a seed document, DESIGN.md or shared/ in the shipped text, the benchmarks and the tests
    (this file names them to look for them)."""
    files = [*_scanned_files(), *_files_under("benchmarks", "tests")]
    return [Hit(str(p.relative_to(ROOT)), line, m.group(0))
            for p in files if p.resolve() != Path(__file__).resolve() for line, m in _hits(p, INTERNAL_REFERENCE)]


def broken_links() -> list[Hit]:
    """Relative Markdown links (not http(s), mailto or a bare #anchor) whose file does not exist."""
    out = []
    for page in _markdown_pages():
        for line, m in _hits(page, MARKDOWN_LINK):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            if not (page.parent / target.split("#", 1)[0]).exists():
                out.append(Hit(str(page.relative_to(ROOT)), line, target))
    return out


def section_numbers(path: Path) -> list[tuple[int, str]]:
    """(line, number) of each numbered heading ('## 3. ...', '### 3.2 ...') of a Markdown page, in order."""
    return [(line, m.group(2)) for line, m in _hits(path, NUMBERED_HEADING)]


def sections_out_of_order(path: Path) -> list[Hit]:
    """Numbered headings that do not continue the count: top level 1, 2, 3, ...; under section n: n.1, n.2, ..."""
    out = []
    current: list[int] = []            # the number of the last heading, e.g. [3, 2] after '### 3.2'
    for line, number in section_numbers(path):
        parts = [int(x) for x in number.split(".")]
        parent = parts[:-1]
        if current[:len(parent)] != parent:
            problem = f"§{number} is not inside the current section §{'.'.join(map(str, current)) or '-'}"
        else:
            want = current[len(parent)] + 1 if len(current) > len(parent) else 1
            problem = None if parts[-1] == want else f"§{number} where §{'.'.join(map(str, parent + [want]))} is next"
        if problem:
            out.append(Hit(str(path.relative_to(ROOT)), line, problem))
        current = parts
    return out


def broken_section_references() -> list[Hit]:
    """'theory.md §9.1'-style pointers (docs, README, flexmb/, verification/, benchmarks/) to a missing section."""
    sections = {page.name: {n for _, n in section_numbers(page)} for page in sorted(DOCS.glob("*.md"))}
    files = [*_scanned_files(), *_files_under("benchmarks")]
    out = []
    for path in files:
        for line, m in _hits(path, SECTION_REFERENCE):
            page = m.group(1) + ".md"
            if page in sections and m.group(2) not in sections[page]:
                out.append(Hit(str(path.relative_to(ROOT)), line, m.group(0)))
    return out


def _report(hits: list[Hit]) -> str:
    return "\n".join(map(str, hits))


def test_no_reference_to_material_outside_the_repository() -> None:
    hits = internal_references()
    assert not hits, ("cite the work by author and year (docs/references.md), not an internal file:\n"
                      + _report(hits))


def test_relative_links_name_existing_files() -> None:
    hits = broken_links()
    assert not hits, "links to missing files:\n" + _report(hits)


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_numbered_sections_in_order(page: str) -> None:
    hits = sections_out_of_order(DOCS / page)
    assert not hits, _report(hits)


def test_theory_manual_has_numbered_sections() -> None:
    """The order test must see theory.md's sections (a heading style it does not parse would pass vacuously)."""
    numbers = [n for _, n in section_numbers(DOCS / "theory.md")]
    assert numbers[:3] == ["1", "1.1", "1.2"] and len(numbers) > 10, numbers


def test_section_references_exist() -> None:
    hits = broken_section_references()
    assert not hits, "pointers to sections that do not exist:\n" + _report(hits)


def test_references_page_lists_the_cited_works() -> None:
    """docs/references.md lists each author-year key the manuals cite for the source documents."""
    text = (DOCS / "references.md").read_text(encoding="utf-8")
    for key in ("Crous 2000", "van der Linde & Schwab 2002", "He 1992", "Huston & Liu 2005", "Ambrósio 2002",
                "Neto & Ambrósio 2002", "Nikravesh 2002", "Lankarani, Olivares & Nagarajan 2002",
                "Pereira & Dias 2002", "Schwab & Meijaard 2002", "Pedersen, Hansen & Ambrósio 2002", "Shabana 2002"):
        assert f"**{key}.**" in text, key


def test_verification_page_covers_every_suite() -> None:
    """docs/verification.md has a section per suite of ``flexmb verify`` (cases, references, tolerances)."""
    from verification import SUITES
    text = (DOCS / "verification.md").read_text(encoding="utf-8")
    missing = [name for name in SUITES if f"\n## Suite {name}\n" not in text]
    assert not missing, f"docs/verification.md has no section for the suites {missing}"
