"""The one way into and out of files stays the only way (issue 43): every module of the package
outside ``files/`` is read (its AST) and may not open, read, write, rename, remove, list, stat
or link a file itself, nor hand SQLite a file name: it calls ``files/``.

What is caught, whatever it is called: a name is traced to what it was imported as (``import
os as o``, ``from os import open as o``, ``from os import path``, ``x = os``), so ``o.open``
is ``os.open``; a name the module does not bind is a builtin (``open``). Forbidden:

- the builtins ``open``, ``eval``, ``exec``, ``__import__``, and ``__builtins__`` itself;
- ``os`` and ``os.path``: everything but what touches no file by name (:data:`OS_ALLOWED`,
  :data:`OS_PATH_ALLOWED`: descriptors the seam handed out, the environment, pure path text);
- every function of ``shutil``, ``tempfile``, ``glob``, ``fcntl``, ``fileinput``, ``zipfile``,
  ``tarfile``, ``dbm``, ``shelve``, ``mmap``, ``ctypes`` (libc's ``open`` by another name);
  ``io.open``/``FileIO``, ``codecs.open``, ``gzip.open``, ``gzip.GzipFile`` but with
  ``fileobj=`` alone, ``bz2``/``lzma`` files;
  ``sqlite3.connect`` (and a ``Connection`` made), ``importlib.import_module``;
- on any object, the methods of ``pathlib.Path`` that touch the file system
  (:data:`PATH_METHODS`), and of SQLite that open one (``backup``, ``load_extension``);
  ``.open`` only on a class of the package (``Workspace.open``), ``.replace`` only as
  ``str.replace``/``dataclasses.replace`` are called (never one argument alone: ``Path.replace``);
- SQL that opens a file (``ATTACH``, ``VACUUM INTO``); ``getattr`` and its kin with a
  forbidden name, or any name on a module.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from test_imports import PACKAGE, SRC, modules

SEAM = f"{PACKAGE}.files"

OS_ALLOWED = frozenset(
    {
        # the environment and the process
        "environ", "environb", "getenv", "getpid", "getppid", "getuid", "geteuid", "getgid",
        "getegid", "kill", "name", "_exit", "strerror", "cpu_count", "get_terminal_size",
        "terminal_size", "getcwd", "umask", "times", "uname", "urandom", "error",
        # descriptors the seam handed out (or standard streams)
        "close", "fstat", "fsync", "fdatasync", "read", "write", "pread", "pwrite",
        "ftruncate", "isatty", "dup", "dup2", "pipe", "set_blocking", "get_blocking",
        "set_inheritable", "get_inheritable",
        # text: paths as names, constants, types
        "sep", "altsep", "extsep", "pathsep", "linesep", "curdir", "pardir", "devnull",
        "fspath", "fsencode", "fsdecode", "PathLike", "stat_result", "path",
    }
)  # fmt: skip
OS_PATH_ALLOWED = frozenset(
    {
        "join", "basename", "dirname", "split", "splitext", "splitdrive", "isabs",
        "normpath", "normcase", "commonpath", "commonprefix", "relpath", "abspath",
        "expanduser", "sep", "altsep", "extsep", "pathsep", "curdir", "pardir",
    }
)  # fmt: skip
WHOLLY = frozenset(
    {"shutil", "tempfile", "glob", "fcntl", "fileinput", "zipfile", "tarfile", "dbm", "shelve",
     "mmap", "ctypes", "pathlib.Path.open"}
)  # fmt: skip
FORBIDDEN = frozenset(
    {
        "builtins.open", "builtins.eval", "builtins.exec", "builtins.__import__",
        "builtins.__builtins__", "io.open", "io.open_code", "io.FileIO", "codecs.open",
        "gzip.open", "bz2.open", "bz2.BZ2File", "lzma.open", "lzma.LZMAFile",
        "sqlite3.connect", "importlib.import_module", "importlib.__import__",
    }
)  # fmt: skip
PATH_METHODS = frozenset(
    {
        "chmod", "lchmod", "exists", "glob", "rglob", "iterdir", "walk", "is_dir", "is_file",
        "is_symlink", "is_fifo", "is_socket", "is_mount", "is_junction", "is_block_device",
        "is_char_device", "lstat", "stat", "mkdir", "rmdir", "touch", "unlink", "rename",
        "read_text", "read_bytes", "write_text", "write_bytes", "readlink", "symlink_to",
        "hardlink_to", "link_to", "resolve", "samefile", "owner",
        # SQLite's, that open a file by its name
        "backup", "load_extension", "enable_load_extension",
    }
)  # fmt: skip
SQL_FILES = re.compile(r"\bATTACH\b|\bVACUUM\s+INTO\b", re.IGNORECASE)
DYNAMIC = frozenset({"getattr", "setattr", "hasattr", "delattr", "vars"})


@dataclass
class Module:
    """What a module's names stand for: the dotted origin of each imported or assigned name,
    and the names of the package's own classes it knows."""

    name: str
    origins: dict[str, str] = field(default_factory=dict)
    classes: set[str] = field(default_factory=set)


def _module_of(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join([*anchor, node.module] if node.module else anchor)


def _bindings(tree: ast.Module, name: str, is_package: bool) -> Module:
    package = name if is_package else name.rpartition(".")[0]
    module = Module(name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    module.origins[alias.asname] = alias.name
                else:  # ``import os.path`` binds ``os``
                    top = alias.name.partition(".")[0]
                    module.origins[top] = top
        elif isinstance(node, ast.ImportFrom):
            source = _module_of(node, package)
            for alias in node.names:
                bound = alias.asname or alias.name
                module.origins[bound] = f"{source}.{alias.name}"
                if source.startswith(PACKAGE) and alias.name[:1].isupper():
                    module.classes.add(bound)
        elif isinstance(node, ast.ClassDef):
            module.classes.add(node.name)
    for node in ast.walk(tree):  # ``o = os``: an alias made by assignment
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Name, ast.Attribute)):
            origin = _origin(node.value, module)
            for target in node.targets:
                if origin is not None and isinstance(target, ast.Name):
                    module.origins.setdefault(target.id, origin)
    return module


def _origin(node: ast.expr, module: Module) -> str | None:
    """The dotted origin of a name or attribute chain (``o.path.exists`` ->
    ``os.path.exists``), or None when it is no imported name."""
    if isinstance(node, ast.Name):
        if node.id in module.origins:
            return module.origins[node.id]
        known = hasattr(builtins, node.id) or node.id == "__builtins__"
        return f"builtins.{node.id}" if known else None
    if isinstance(node, ast.Attribute):
        base = _origin(node.value, module)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _forbidden(origin: str) -> bool:
    if origin in FORBIDDEN:
        return True
    head, _, attr = origin.rpartition(".")
    if origin.split(".")[0] in WHOLLY and "." in origin:
        return True
    if head == "os":
        return attr not in OS_ALLOWED and not attr.startswith(("O_", "W_", "R_", "X_", "F_"))
    if head == "os.path":
        return attr not in OS_PATH_ALLOWED
    if head == "gzip" and attr == "GzipFile":
        return False  # judged where it is called: fileobj= only
    return False


def findings(source: str, name: str, *, is_package: bool = False) -> Iterator[str]:
    """``line: what`` for each way around the seam in the module ``source``."""
    tree = ast.parse(source)
    module = _bindings(tree, name, is_package)
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            yield f"{line}: from {_module_of(node, name)} import *"
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            yield from _imported(node, module, line)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            origin = _origin(node, module)
            if origin is not None and (_forbidden(origin) or origin in WHOLLY):
                yield f"{line}: {node.id} ({origin})"
        elif isinstance(node, ast.Attribute):
            yield from _attribute(node, module, line, called)
        elif isinstance(node, ast.Call):
            yield from _call(node, module, line)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and SQL_FILES.search(node.value)
        ):
            yield f"{line}: SQL that opens a file: {node.value[:40]!r}"


def _imported(node: ast.Import | ast.ImportFrom, module: Module, line: int) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] in WHOLLY:
                yield f"{line}: import {alias.name}"
        return
    source = _module_of(node, module.name)
    for alias in node.names:
        origin = f"{source}.{alias.name}"
        if source in WHOLLY or _forbidden(origin):
            yield f"{line}: from {source} import {alias.name}"


def _attribute(node: ast.Attribute, module: Module, line: int, called: set[int]) -> Iterator[str]:
    origin = _origin(node, module)
    if origin is not None:
        if _forbidden(origin):
            yield f"{line}: {ast.unparse(node)} ({origin})"
        if node.attr == "__dict__":
            yield f"{line}: {ast.unparse(node)}: a module's names, looked up"
        return
    if node.attr in PATH_METHODS:
        yield f"{line}: .{node.attr} ({ast.unparse(node)})"
    elif node.attr == "open" and not _a_class_of_ours(node.value, module):
        yield f"{line}: .open on {ast.unparse(node.value)}, no class of the package"
    elif node.attr == "replace" and id(node) not in called:
        yield f"{line}: .replace, not called ({ast.unparse(node)})"


def _a_class_of_ours(node: ast.expr, module: Module) -> bool:
    return isinstance(node, ast.Name) and (node.id == "cls" or node.id in module.classes)


def _call(node: ast.Call, module: Module, line: int) -> Iterator[str]:
    func = node.func
    origin = _origin(func, module)
    replace = isinstance(func, ast.Attribute) and func.attr == "replace" and origin is None
    if replace and len(node.args) == 1 and not node.keywords:  # Path.replace(target)
        yield f"{line}: {ast.unparse(node)} (a rename)"
    if origin == "gzip.GzipFile" and (
        node.args or {k.arg for k in node.keywords} - {"fileobj", "mode"}
    ):
        yield f"{line}: {ast.unparse(node)} (a gzip file opened by its name)"
    if origin in ("sqlite3.Connection",):
        yield f"{line}: {ast.unparse(node)} (a database opened by its name)"
    if origin in {f"builtins.{name}" for name in DYNAMIC} and node.args:
        yield from _dynamic(node, module, line)


def _dynamic(node: ast.Call, module: Module, line: int) -> Iterator[str]:
    target = _origin(node.args[0], module)
    is_module = (
        target is not None
        and not target.startswith("builtins.")
        and (target.split(".")[0] in {"os", "io", "codecs", "gzip", "sqlite3", "pathlib", *WHOLLY})
    )
    if len(node.args) < 2:
        if is_module:
            yield f"{line}: {ast.unparse(node)}: a module's names, looked up"
        return
    name = node.args[1]
    if not isinstance(name, ast.Constant) or not isinstance(name.value, str):
        if is_module:
            yield f"{line}: {ast.unparse(node)}: a name of a module, worked out at run time"
        return
    named = name.value in PATH_METHODS or name.value in ("open", "replace")
    if named or (is_module and target is not None and _forbidden(f"{target}.{name.value}")):
        yield f"{line}: {ast.unparse(node)}"


def _outside_the_seam() -> Iterator[tuple[str, Path]]:
    for name, path in modules().items():
        if name != SEAM and not name.startswith(f"{SEAM}."):
            yield name, path


def test_no_module_outside_files_touches_a_file_itself() -> None:
    found = [
        f"{path.relative_to(SRC)}:{finding}"
        for name, path in _outside_the_seam()
        for finding in findings(
            path.read_text(encoding="utf-8"), name, is_package=path.name == "__init__.py"
        )
    ]
    assert not found, (
        "around the seam (files/ is the one way into and out of files):\n" + "\n".join(found)
    )


PLANTED = [
    ("open('x')", "builtins.open"),
    ("import os\nos.open('x', 0)", "os.open"),
    ("import os as o\no.replace('a', 'b')", "os.replace"),
    ("from os import open as o\no('x', 0)", "from os import open"),
    ("from os import path\npath.exists('x')", "os.path.exists"),
    ("import os.path as p\np.realpath('x')", "os.path.realpath"),
    ("import os\nx = os\nx.unlink('a')", "os.unlink"),
    ("import os\nos.scandir('.')", "os.scandir"),
    ("import io\nio.open('x')", "io.open"),
    ("import gzip\ngzip.GzipFile('x')", "by its name"),
    ("import gzip\ngzip.open('x')", "gzip.open"),
    ("import shutil\nshutil.copy('a', 'b')", "import shutil"),
    ("from tempfile import mkstemp\nmkstemp()", "from tempfile import mkstemp"),
    ("import sqlite3\nsqlite3.connect('x')", "sqlite3.connect"),
    ("import fcntl\nfcntl.flock(3, 2)", "import fcntl"),
    ("from pathlib import Path\nPath('x').read_text()", ".read_text"),
    ("from pathlib import Path\nPath('x').open()", ".open on Path('x')"),
    ("def f(p):\n    return p.open('rb')", ".open on p"),
    ("def f(p):\n    p.replace('target')", "(a rename)"),
    ("def f(p):\n    g = p.replace\n    g('t')", "not called"),
    ("def f(p):\n    return p.resolve()", ".resolve"),
    ("def f(p):\n    return p.stat().st_size", ".stat"),
    ("def f(p):\n    return p.exists()", ".exists"),
    ("def f(p):\n    p.unlink()", ".unlink"),
    ("def f(p):\n    return list(p.iterdir())", ".iterdir"),
    ("def f(db):\n    db.execute('ATTACH DATABASE ? AS x', ('y',))", "SQL that opens a file"),
    ("def f(p):\n    return getattr(p, 'read_bytes')()", "getattr(p, 'read_bytes')"),
    ("import os\ngetattr(os, 'remove')('x')", "getattr(os, 'remove')"),
    ("import os\ngetattr(os, name)", "worked out at run time"),
    ("import os\nos.__dict__['open']", "a module's names"),
    ("__builtins__['open']('x')", "__builtins__"),
    ("__import__('os').open('x', 0)", "__import__"),
    ("import importlib\nimportlib.import_module('os')", "importlib.import_module"),
    ("from os import *", "import *"),
    ("import codecs\ncodecs.open('x')", "codecs.open"),
    ("import ctypes\nctypes.CDLL(None).open(b'x', 0)", "import ctypes"),
]


@pytest.mark.parametrize(("source", "said"), PLANTED, ids=[p[1] for p in PLANTED])
def test_a_planted_way_around_the_seam_is_caught(source: str, said: str) -> None:
    found = list(findings(source, f"{PACKAGE}.hub.planted"))
    assert any(said in finding for finding in found), found


ALLOWED = [
    "import os\nos.close(3); os.fstat(3); os.environ.get('HOME'); os.path.join('a', 'b')",
    "import os\nflags = os.O_RDONLY | getattr(os, 'O_BINARY', 0)",
    "from .workspace import Workspace\nWorkspace.open('x')",
    "class Ledger:\n    @classmethod\n    def at(cls):\n        return cls.open()",
    "'a-b'.replace('-', '')",
    "import dataclasses\ndataclasses.replace(x, a=1)",
    "import msgspec\nmsgspec.structs.replace(x, y=1)",
    "import re\nre.match('a', 'b').group(1)",
    "import gzip\ngzip.GzipFile(fileobj=raw, mode='rb')",
    "import sqlite3\ndef f(db: sqlite3.Connection) -> None:\n    raise sqlite3.OperationalError",
    "from pathlib import Path\nPath('x').absolute().as_uri(); Path.cwd(); Path('~').expanduser()",
]


@pytest.mark.parametrize("source", ALLOWED)
def test_what_touches_no_file_by_name_is_left_alone(source: str) -> None:
    assert list(findings(source, f"{PACKAGE}.hub.allowed")) == []
