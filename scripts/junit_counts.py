"""The closing line of scripts/test.sh: how many tests passed, failed and were skipped, from
pytest's JUnit XML file, every count written (pytest's own line leaves out the zeros)::

    tests: 1060 passed, 0 failed, 0 skipped

A test that errored (in a fixture) counts as failed. A test marked to fail, that failed
(``xfail``: JUnit writes it as skipped), ran and is no skip: it is said on a line before, with
how many (``tests: 4 failed as expected (xfail)``). Nothing is printed when the file is missing
or unreadable (pytest stopped before writing it: its own output says why)."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET


def counts(path: str) -> tuple[int, int, int, int] | None:
    """Passed, failed (errors included), skipped and failed as expected (xfail), or None when
    the file cannot be read."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = failed = skipped = 0
    for suite in suites:
        total += int(suite.get("tests", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skipped += int(suite.get("skipped", 0))
    xfailed = sum(1 for s in root.iter("skipped") if s.get("type") == "pytest.xfail")
    return total - failed - skipped, failed, skipped - xfailed, xfailed


def main(argv: list[str]) -> int:
    found = counts(argv[1]) if len(argv) == 2 else None
    if found is None:
        return 1
    passed, failed, skipped, xfailed = found
    if xfailed:
        print(f"tests: {xfailed} failed as expected (xfail)")
    print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
