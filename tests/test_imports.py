"""The package's layout holds: no module over 400 lines, no import circles in ``src/`` (each
module's imports, those inside functions included, only ``if TYPE_CHECKING:`` blocks left out
as they never run, draw a graph with no cycle), the rooms stand on their floors (a room never
imports a room above it, ``TYPE_CHECKING`` blocks included), the package's top holds only what
docs/development.md says, and the CLI runs without the test extra.

A circle is a seam in the wrong place: two modules that each need the other are one idea (or
the idea they share wants a module of its own). A package's ``__init__`` is not counted as
imported by its submodules (Python imports it first, but it is not a dependency of theirs).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "openlineage_export"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    """Every module of the package, by its dotted name."""
    return {module_name(path): path for path in sorted((SRC / PACKAGE).rglob("*.py"))}


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node that runs, leaving out the bodies of ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in [child, *_runtime_nodes(child)])
            continue
        yield node
        yield from _runtime_nodes(node)


def imported(
    name: str, path: Path, known: dict[str, Path], *, typing_too: bool = False
) -> set[str]:
    """The package's modules that module ``name`` imports (``typing_too``: those imported
    only for type checking too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree) if typing_too else _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            # ``from . import x``: x may be a module of its own.
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {module for module in found if module in known and module != name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


MAX_LINES = 400
"""A module holds one idea and reads in one sitting (docs/development.md, "The code")."""


def test_no_module_is_over_400_lines() -> None:
    sizes = {
        name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in modules().items()
    }
    assert not {name: size for name, size in sizes.items() if size > MAX_LINES}


def test_no_module_of_the_package_imports_itself_through_others() -> None:
    known = modules()
    graph = {name: imported(name, path, known) for name, path in known.items()}
    circles = cycles(graph)
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(circle) for circle in circles)


FLOORS = (
    (f"{PACKAGE}", f"{PACKAGE}.errors", f"{PACKAGE}.jsonout"),
    (f"{PACKAGE}.files",),
    (f"{PACKAGE}.host",),
    (f"{PACKAGE}.guards",),
    (f"{PACKAGE}.state",),
    (f"{PACKAGE}.hub",),
    (f"{PACKAGE}.translate",),
    (f"{PACKAGE}.deliver",),
    (f"{PACKAGE}.export",),
    (f"{PACKAGE}.terminal", f"{PACKAGE}.html_report"),
    (f"{PACKAGE}.cli",),
    (f"{PACKAGE}.__main__",),
)
"""The rooms from the ground up (docs/development.md, "The code"): data flows one way, hub ->
translate -> deliver, with what the editor provides (``host``) and its guards below and the
hosts of the library (``terminal``, ``cli``) above. A room may import its own floor's rooms
and those below, never one above."""


def floor(module: str) -> int:
    """The floor of the room ``module`` lives in."""
    parts = module.split(".")
    room = ".".join(parts[:2]) if len(parts) > 1 else parts[0]
    for level, rooms in enumerate(FLOORS):
        if room in rooms:
            return level
    raise AssertionError(f"{module}: in no room of FLOORS (add its room there)")


def test_every_room_imports_only_its_own_floor_and_those_below() -> None:
    known = modules()
    upward = sorted(
        f"{name} ({floor(name)}) imports {target} ({floor(target)})"
        for name, path in known.items()
        for target in imported(name, path, known, typing_too=True)
        if floor(target) > floor(name)
    )
    assert not upward, "imports up the floors:\n" + "\n".join(upward)


def test_no_module_imports_itself_through_others_even_for_type_checking() -> None:
    known = modules()
    graph = {name: imported(name, path, known, typing_too=True) for name, path in known.items()}
    circles = cycles(graph)
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(circle) for circle in circles)


TOP = {"__init__.py", "__main__.py", "errors.py", "jsonout.py", "py.typed"}
"""What the package's top holds besides its rooms: its name and version, how it runs, the one
exception tree and the one JSON-output seam."""


def test_the_package_top_holds_only_its_entry_points_and_its_two_leaves() -> None:
    top = SRC / PACKAGE
    loose = sorted(p.name for p in top.iterdir() if p.is_file() and p.name not in TOP)
    assert not loose, f"modules loose at the package's top, each belongs in a room: {loose}"
    for room in (p for p in top.iterdir() if p.is_dir() and p.name != "__pycache__"):
        assert floor(f"{PACKAGE}.{room.name}") >= 0
        assert (room / "__init__.py").exists(), f"{room.name}/ is not a package"


WITHOUT_TEST_EXTRA = """
import sys
sys.modules["openlineage"] = None  # as if not installed: an import of it fails
sys.modules["httpx"] = None
sys.argv = ["openlineage-export", *sys.argv[1:]]
from openlineage_export.__main__ import main
main()
"""


def test_the_cli_runs_without_what_only_the_tests_need(tmp_path: Path) -> None:
    """openlineage-python (the tests' reference) and httpx (a host's client) are in the test
    extra, not the dependencies: nothing the CLI runs imports them."""
    import subprocess
    import sys

    from helpers import DEMO

    out = tmp_path / "events.jsonl"
    for args in (
        ["--help"],
        ["export", "--dry-run", "-q", "-w", str(DEMO), "-o", str(out)],
        ["settings", "list", "-w", str(DEMO)],
    ):
        done = subprocess.run(
            [sys.executable, "-c", WITHOUT_TEST_EXTRA, *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, (args, done.stderr)
    assert len(out.read_bytes().splitlines()) == 236
