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
- SQL that opens a file (``ATTACH``, ``VACUUM INTO``), and SQL handed to ``execute`` that is
  not one constant (``'ATT' + 'ACH'``; an f-string only after a literal ``SELECT`` or
  ``PRAGMA``);
  ``getattr`` and its kin with a forbidden name, or any name on a module;
- an import of any module not in :data:`IMPORTABLE` (modules known to touch no file by name,
  or judged here name by name): ``posix``, ``_io``, ``nt``, ``subprocess``, ``runpy``,
  ``importlib``, ``configparser``, ``netrc``, ``linecache``, ``webbrowser``... are not;
  ``sqlite3.dbapi2``, ``asyncio``'s subprocesses, ``logging``'s file handlers, jinja2's file
  loaders, ``socket.AF_UNIX``, ``sys.modules`` and ``sys.path`` are forbidden by name; a method
  of pathlib's classes called on the class (``Path.unlink(p)``) and a subclass of them;
- a library handed a file name to open itself (:func:`_library_files`: keyring's config,
  OpenSSL's ``cafile=``, libcurl's ``CAINFO``..., librdkafka's ``ssl.ca.location``, Graphviz
  run by ``graphviz``, ``trust_env``): each such call site is listed in
  :data:`LIBRARY_FILES` with why it is safe, and a new one fails the test.
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
IMPORTABLE = frozenset(
    {
        "__future__", "abc", "aiohttp", "asyncio", "base64", "bisect", "click", "collections",
        "concurrent", "confluent_kafka", "contextlib", "dataclasses", "datetime", "difflib",
        "email", "enum", "errno", "functools", "graphviz", "gzip", "hashlib", "heapq", "html",
        "httpx", "ipaddress", "itertools", "jinja2", "json", "keyring", "logging", "markupsafe",
        "math", "msgspec", "operator", "orjson", "os", "pathlib", "posixpath", "pycurl",
        "random", "re", "rich", "select", "signal", "socket", "sqlite3", "ssl", "stat",
        "string", "struct", "sys", "textwrap", "threading", "time", "types", "typing",
        "unicodedata", "urllib", "uuid", "yaml", "zlib", PACKAGE,
    }
)  # fmt: skip
"""Modules a module outside files/ may import: they touch no file by name, or what of them
does is forbidden below by name. Anything else (``posix``, ``_io``, ``subprocess``, ``runpy``,
``importlib``, ``configparser``...) is a way around the seam until it is judged and listed."""
FORBIDDEN_PREFIXES = (
    "sqlite3.dbapi2", "asyncio.create_subprocess", "asyncio.subprocess", "logging.FileHandler",
    "logging.handlers", "logging.config", "logging.basicConfig", "jinja2.FileSystemLoader",
    "jinja2.PackageLoader", "jinja2.ModuleLoader", "socket.AF_UNIX", "sys.modules", "sys.path",
)  # fmt: skip
PATHLIB_CLASS = re.compile(r"pathlib\.(Pure)?(Posix|Windows)?Path\.(\w+)$")
MORE_METHODS = frozenset(
    {
        "listdir", "makedirs", "scandir", "mkfifo", "mknod", "chown", "lchown", "utime",
        "chdir", "chroot", "removedirs", "renames", "symlink",
        # OpenSSL's, that open a file by its name
        "load_verify_locations", "load_cert_chain", "load_dh_params",
    }
)  # fmt: skip
"""Names of functions that touch a file by name, caught as methods of any object (``os``
passed as a parameter: ``o.listdir``); ``remove`` is not among them (``list.remove``)."""
KEYRING_NO_FILE = frozenset(
    {
        "keyring.errors", "keyring.backend.KeyringBackend", "keyring.backend.get_all_keyring",
        "keyring.backend.by_priority", "keyring.backend._limit", "keyring.backends.fail.Keyring",
        "keyring.core.load_env", "keyring.set_keyring", "keyring.util.platform_.config_root",
    }
)  # fmt: skip
"""keyring's names that read no file (its backend chosen from what is installed, and the
environment); any other (``get_keyring``, ``get_password``...) reads ``keyringrc.cfg``."""
KEYRING_MODULES = frozenset(
    {
        "keyring.backend", "keyring.backends", "keyring.backends.fail", "keyring.core",
        "keyring.errors", "keyring.util", "keyring.util.platform_",
    }
)  # fmt: skip
GRAPHVIZ_NO_FILE = frozenset({"graphviz.Digraph", "graphviz.Graph"})
GRAPHVIZ_RUNS = frozenset({"render", "view", "pipe", "save", "unflatten"})
PYCURL_FILES = frozenset(
    {
        "CAINFO", "CAPATH", "COOKIEFILE", "COOKIEJAR", "SSLCERT", "SSLKEY", "CRLFILE",
        "ISSUERCERT", "NETRC", "NETRC_FILE", "SSH_PRIVATE_KEYFILE", "SSH_PUBLIC_KEYFILE",
        "SSH_KNOWNHOSTS", "RANDOM_FILE", "EGDSOCKET", "PROXY_CAINFO", "PROXY_CAPATH",
        "PROXY_SSLCERT", "PROXY_SSLKEY", "PROXY_CRLFILE", "ALTSVC", "HSTS", "UNIX_SOCKET_PATH",
        "READDATA", "WRITEDATA", "PINNEDPUBLICKEY", "SSL_ENGINE",
    }
)  # fmt: skip
LIBRDKAFKA_FILES = re.compile(
    r"ssl\.(ca|certificate|key|crl|keystore|engine)\.location|ssl\.ca\.certificate\.stores|"
    r"https\.ca\.location|sasl\.kerberos\.keytab|sasl\.kerberos\.kinit\.cmd|"
    r"plugin\.library\.paths|sasl\.oauthbearer\.assertion\.\w+\.file"
)
CA_BUNDLE = (
    "the CA bundle: the user's setting (openlineage.tls.caBundle, user-only: a workspace "
    "cannot set it; a relative one starts at the workspace, which is the user's choice)"
)
LIBRARY_FILES: dict[tuple[str, str], str] = {
    ("host/keyring_store.py", "keyring.get_keyring"): (
        "keyringrc.cfg and its keyring-path: only after config_is_users found keyring's config "
        "folder the user's (files/whose.py); otherwise the backend is chosen without it"
    ),
    ("deliver/http/poster.py", "cafile="): CA_BUNDLE,
    ("deliver/http/curl_client.py", "pycurl.CAINFO"): CA_BUNDLE,
    ("deliver/http/curl_client.py", "pycurl.CAPATH"): "set to no folder: nothing is opened",
    ("deliver/http/curl_transfer.py", "pycurl.CAINFO"): (
        "the system's CAs as Python's ssl finds them (SSL_CERT_FILE of the user's environment)"
    ),
    ("deliver/http/curl_transfer.py", "pycurl.CAPATH"): (
        "the system's CAs as Python's ssl finds them (SSL_CERT_DIR of the user's environment)"
    ),
    ("deliver/kafka/config.py", "'ssl.ca.location'"): CA_BUNDLE,
    ("deliver/http/curl_client.py", "pycurl.NETRC"): "set to NETRC_IGNORED: ~/.netrc is not read",
    ("state/migrations.py", "db.execute(statement)"): (
        "the statements of the module's constant MIGRATIONS (each constant checked for ATTACH)"
    ),
    ("deliver/http/client.py", "sys.modules"): (
        "isinstance against aiohttp's or httpx's classes without importing them: no file"
    ),
}
"""Each call site outside files/ that hands a library a file name (or reaches past the
seam), with why it is safe: the list is explicit, and a new one fails the test."""


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
    if origin in FORBIDDEN or origin.startswith(FORBIDDEN_PREFIXES):
        return True
    found = PATHLIB_CLASS.match(origin)
    if found is not None and found.group(3) in (*PATH_METHODS, *MORE_METHODS, "open", "replace"):
        return True  # Path.unlink(p): the method called on the class
    head, _, attr = origin.rpartition(".")
    if origin.split(".")[0] in WHOLLY and "." in origin:
        return True
    if head == "os":
        return attr not in OS_ALLOWED and not attr.startswith(("O_", "W_", "R_", "X_", "F_"))
    if head in ("os.path", "posixpath"):
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
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if SQL_FILES.search(node.value):
                yield f"{line}: SQL that opens a file: {node.value[:40]!r}"
            elif LIBRDKAFKA_FILES.fullmatch(node.value):
                yield f"{line}: {node.value!r} (librdkafka opens it by name)"
        elif isinstance(node, ast.ClassDef):
            for base in node.bases:
                origin = _origin(base, module)
                if origin is not None and origin.startswith("pathlib."):
                    yield f"{line}: class {node.name}({origin}): pathlib's methods, inherited"
    if "graphviz" in {origin.split(".")[0] for origin in module.origins.values()}:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in GRAPHVIZ_RUNS:
                yield f"{node.lineno}: .{node.attr} (graphviz runs dot, or writes a file)"


def _imported(node: ast.Import | ast.ImportFrom, module: Module, line: int) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            top = alias.name.split(".")[0]
            if top in WHOLLY or top not in IMPORTABLE or _forbidden(alias.name):
                yield f"{line}: import {alias.name}"
        return
    source = _module_of(node, module.name)
    for alias in node.names:
        origin = f"{source}.{alias.name}"
        top = source.split(".")[0]
        if source in WHOLLY or top not in IMPORTABLE or _forbidden(origin):
            yield f"{line}: from {source} import {alias.name}"


def _attribute(node: ast.Attribute, module: Module, line: int, called: set[int]) -> Iterator[str]:
    origin = _origin(node, module)
    if origin is not None:
        if _forbidden(origin):
            yield f"{line}: {ast.unparse(node)} ({origin})"
        yield from _library_files(origin, line)
        if node.attr == "__dict__":
            yield f"{line}: {ast.unparse(node)}: a module's names, looked up"
        if not origin.startswith(PACKAGE + "."):
            return
        # A name of the package's own (``from .paths import HOME``): its methods are judged
        # as any object's (``HOME.unlink()``), but for the package's own ``.open``.
        if node.attr == "open":
            return
    if node.attr in PATH_METHODS or node.attr in MORE_METHODS:
        yield f"{line}: .{node.attr} ({ast.unparse(node)})"
    elif node.attr == "open" and not _a_class_of_ours(node.value, module):
        yield f"{line}: .open on {ast.unparse(node.value)}, no class of the package"
    elif node.attr == "replace" and id(node) not in called:
        yield f"{line}: .replace, not called ({ast.unparse(node)})"


def _library_files(origin: str, line: int) -> Iterator[str]:
    """A library's name that has it open a file by a name it is handed or finds itself."""
    head, _, attr = origin.rpartition(".")
    if origin.startswith("keyring."):
        if origin not in KEYRING_MODULES and not origin.startswith(tuple(KEYRING_NO_FILE)):
            yield f"{line}: {origin} (keyring reads its config file)"
    elif origin.startswith("graphviz.") and not origin.startswith(tuple(GRAPHVIZ_NO_FILE)):
        yield f"{line}: {origin} (graphviz runs dot, or writes a file)"
    elif head == "pycurl" and attr in PYCURL_FILES:
        yield f"{line}: {origin} (libcurl opens it by name)"


def _a_class_of_ours(node: ast.expr, module: Module) -> bool:
    return isinstance(node, ast.Name) and (node.id == "cls" or node.id in module.classes)


def _call(node: ast.Call, module: Module, line: int) -> Iterator[str]:
    func = node.func
    origin = _origin(func, module)
    replace = isinstance(func, ast.Attribute) and func.attr == "replace" and origin is None
    keywords = {k.arg for k in node.keywords}
    if replace and (
        (len(node.args) == 1 and not keywords) or (not node.args and keywords == {"target"})
    ):  # Path.replace(target)
        yield f"{line}: {ast.unparse(node)} (a rename)"
    executes = ("execute", "executemany", "executescript")
    if (
        isinstance(func, ast.Attribute)
        and func.attr in executes
        and node.args
        and not _one_constant(node.args[0], func.attr == "executescript")
    ):
        yield f"{line}: {ast.unparse(node)[:60]} (SQL that is not one constant)"
    for keyword in node.keywords:
        if keyword.arg in ("cafile", "capath"):
            yield f"{line}: {keyword.arg}= (OpenSSL opens it by name)"
        is_false = isinstance(keyword.value, ast.Constant) and keyword.value.value is False
        if keyword.arg == "trust_env" and not is_false:
            yield f"{line}: trust_env= (the client reads ~/.netrc)"
    if origin == "gzip.GzipFile" and (
        node.args or {k.arg for k in node.keywords} - {"fileobj", "mode"}
    ):
        yield f"{line}: {ast.unparse(node)} (a gzip file opened by its name)"
    if origin in ("sqlite3.Connection",):
        yield f"{line}: {ast.unparse(node)} (a database opened by its name)"
    if origin in {f"builtins.{name}" for name in DYNAMIC} and node.args:
        yield from _dynamic(node, module, line)


def _one_constant(sql: ast.expr, script: bool) -> bool:
    """SQL that is one string constant or, for ``execute``, an f-string whose literal start is
    ``SELECT`` or ``PRAGMA`` (one statement: ``execute`` runs no second one, so nothing is
    attached whatever is put in it)."""
    if isinstance(sql, ast.Constant) and isinstance(sql.value, str):
        return True
    if isinstance(sql, ast.JoinedStr) and sql.values and not script:
        first = sql.values[0]
        return (
            isinstance(first, ast.Constant)
            and isinstance(first.value, str)
            and first.value.lstrip().upper().startswith(("SELECT ", "PRAGMA "))
        )
    return False


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


def _listed(where: str, finding: str, used: set[tuple[str, str]]) -> bool:
    """Whether ``finding`` in the module ``where`` (relative to the package) is a call site
    :data:`LIBRARY_FILES` lists (and note it used)."""
    for site in LIBRARY_FILES:
        if site[0] == where and site[1] in finding.partition(": ")[2]:
            used.add(site)
            return True
    return False


def test_no_module_outside_files_touches_a_file_itself() -> None:
    used: set[tuple[str, str]] = set()
    found = [
        f"{path.relative_to(SRC)}:{finding}"
        for name, path in _outside_the_seam()
        for finding in findings(
            path.read_text(encoding="utf-8"), name, is_package=path.name == "__init__.py"
        )
        if not _listed(path.relative_to(SRC / PACKAGE).as_posix(), finding, used)
    ]
    assert not found, (
        "around the seam (files/ is the one way into and out of files):\n" + "\n".join(found)
    )
    assert used == set(LIBRARY_FILES), f"listed but no longer there: {set(LIBRARY_FILES) - used}"


PLANTED = [
    ("open('x')", "builtins.open"),
    ("from .paths import HOME\nHOME.unlink()", ".unlink (HOME.unlink)"),
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
    # attack C, C3: each of these went round the test
    ("from pathlib import Path\nPath.unlink(Path('x'))", "pathlib.Path.unlink"),
    ("from pathlib import Path\nPath.write_text(Path('x'), 'd')", "pathlib.Path.write_text"),
    ("from pathlib import Path\nPath.open(Path('x'), 'w')", "pathlib.Path.open"),
    ("from pathlib import PurePath\nPurePath.replace(PurePath('a'), 'b')", "PurePath.replace"),
    ("def f(p):\n    p.replace(target='b')", "(a rename)"),
    ("import posix\nposix.open('x', 0)", "import posix"),
    ("import nt\nnt.open('x', 0)", "import nt"),
    ("import posixpath\nposixpath.realpath('x')", "posixpath.realpath"),
    ("import _io\n_io.open('x')", "import _io"),
    ("from sqlite3 import dbapi2\ndbapi2.connect('x')", "from sqlite3 import dbapi2"),
    ("import _sqlite3\n_sqlite3.connect('x')", "import _sqlite3"),
    ("def f(db):\n    db.execute('ATT' + 'ACH DATABASE ? AS x', ('y',))", "not one constant"),
    ("def f(db, s):\n    db.executescript(f'{s}')", "not one constant"),
    ("import subprocess\nsubprocess.run(['rm', 'x'])", "import subprocess"),
    ("import asyncio\nasyncio.create_subprocess_exec('cat')", "asyncio.create_subprocess_exec"),
    ("import logging\nlogging.FileHandler('x')", "logging.FileHandler"),
    ("import ssl\nssl.create_default_context(cafile='x')", "cafile="),
    ("def f(ctx):\n    ctx.load_verify_locations('x')", ".load_verify_locations"),
    ("import pycurl\npycurl.Curl().setopt(pycurl.COOKIEJAR, 'x')", "pycurl.COOKIEJAR"),
    ("def f(c):\n    c['ssl.key.location'] = 'x'", "librdkafka opens it"),
    ("from importlib import resources\nresources.read_text('p', 'x')", "from importlib import"),
    ("import importlib.util as u\nu.spec_from_file_location('m', 'x.py')", "import importlib"),
    ("import runpy\nrunpy.run_path('x.py')", "import runpy"),
    ("import linecache\nlinecache.getlines('x')", "import linecache"),
    ("import graphviz\ngraphviz.Digraph().render('x')", ".render"),
    ("import graphviz\ngraphviz.pipe('dot', 'svg', b'')", "graphviz.pipe"),
    ("import jinja2\njinja2.FileSystemLoader('/')", "jinja2.FileSystemLoader"),
    ("import webbrowser\nwebbrowser.open('file:///x')", "import webbrowser"),
    ("import socket\nsocket.socket(socket.AF_UNIX).bind('x')", "socket.AF_UNIX"),
    ("import sys\nsys.modules['os'].remove('x')", "sys.modules"),
    ("def f(o):\n    o.listdir('.'); o.makedirs('a')", ".listdir"),
    ("from pathlib import PosixPath\nclass P(PosixPath):\n    pass", "class P"),
    ("import httpx\nhttpx.Client(trust_env=True)", "trust_env="),
    ("import netrc\nnetrc.netrc('x')", "import netrc"),
    ("import configparser\nconfigparser.ConfigParser().read('x')", "import configparser"),
    ("import keyring\nkeyring.set_password('s', 'u', 'p')", "keyring.set_password"),
    ("import keyring\nkeyring.get_keyring()", "keyring.get_keyring"),
    ("def f(opener=open):\n    return opener('x')", "builtins.open"),
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
    "def f(db, where):\n    db.execute(f'SELECT a FROM t WHERE {where}')",
    "import keyring.errors\nraise keyring.errors.PasswordDeleteError()",
    "import keyring.backend\nmax(keyring.backend.get_all_keyring(), key=keyring.backend.by_priority)",
    "import graphviz\ngraphviz.Digraph('g').source",
    "import aiohttp\naiohttp.ClientSession(trust_env=False)",
]


@pytest.mark.parametrize("source", ALLOWED)
def test_what_touches_no_file_by_name_is_left_alone(source: str) -> None:
    assert list(findings(source, f"{PACKAGE}.hub.allowed")) == []
