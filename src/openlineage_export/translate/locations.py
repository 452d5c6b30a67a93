"""A location as it may be named: every credential it is written with taken out.

A dataset's location comes from the trail as the pipeline wrote it, and pipelines write
connection strings: ``jdbc:postgresql://admin:PW@db/...``, ``...;password=PW``,
``oracle://user/PW@host``, an object store's signed url. The name made of it goes to a lineage
server, which many people read, and to the terminal. So this is the one rule (docs/mapping.md
says it in words) that takes a credential out of a location in every form one is written in,
before a name is made of it (``datasets.py``); the same location always loses the same parts,
so names stay deterministic.

Taken out:

- userinfo before ``@`` in an authority (``scheme://user:pw@host``, any scheme, SQLAlchemy's
  ``oracle+cx_oracle://`` and ``jdbc:`` prefixed too, blanks before it, a network path
  ``//user:pw@host`` or ``\\\\user:pw@host``), and at the start of a location with no scheme
  (``user:pw@host/...``, ``TOKEN@host/...``). In ``abfss://`` and ``wasbs://`` the part
  before ``@`` is the container, kept unless it holds a ``:`` (then it is a user and password);
- Oracle's ``user/password@`` (``oracle://``, ``jdbc:oracle:thin:``...), a quoted password too;
- a parameter whose name says it holds a secret (:func:`is_credential_name`: ``password``,
  ``pwd``, ``key``, ``token``, ``secret``, ``sig``, ``X-Amz-Signature``, ``AccountKey``...; any
  case, percent-encoded or not; blanks around it and its ``=``) after ``?``, ``&``, ``;``,
  ``#`` or at the start (and after ``:`` when a ``;`` ends it, as DB2 writes them), its value up
  to the next separator or, braced, to its ``}``; and in a list (``,``, ``(...)`` or blanks:
  Teradata's ``/USER=u,PASSWORD=pw``, Connector/J's ``(host=h,password=pw)``, libpq's
  ``host=h password=pw``), its value up to the next ``,``, ``)`` or blank.

A ``@`` inside such a parameter's value (``;password=p@ss``) is the password's, not the end of
a userinfo; what either reading calls a credential is taken out. What remains of the query and
fragment never reaches a name either (``datasets.py`` drops them).

The same rule masks (:func:`masked`) what a run's parameters and an error's text say, which go
to the same server (``facets.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..host.credentials import (
    CREDENTIAL_ENDINGS,
    CREDENTIAL_NAMES,
    is_credential_name,
)

_PARAMETER = re.compile(
    r"(?P<sep>[?&;:#]|%3[bBfF]|%26|^)\s*"
    r"(?P<name>(?:[^=?&;:#/@%\s]|(?!%3[bBdDfF]|%26)%[0-9A-Fa-f]{2}){1,128})"
    r"\s*(?:=|%3[dD])\s*(?P<value>\{(?:[^}]|\}\})*\}?"
    r"|%7[bB](?:%7[dD]%7[dD]|(?!%7[dD]).)*(?:%7[dD])?"
    r"|(?:(?!%3[bB]|%26)[^&;#])*)",
    re.DOTALL,
)
"""``sep name=value``, the separators percent-encoded or not, spaces around the name and the
``=`` (``; Pwd = PW``); a braced value (ODBC, SQL Server: ``{a;b}``, ``}}`` for ``}``;
percent-encoded too) is one."""
_LISTED = re.compile(
    r"(?P<sep>[,(]|(?<!\s)\s)\s*(?P<name>[^=?&;:#/@%\s,()]{1,128})\s*(?:=|%3[dD])\s*"
    r"(?P<value>'(?:[^'\\]|\\.)*'?|\"(?:[^\"\\]|\\.)*\"?|[^,);&#\s]*)",
    re.DOTALL,
)
"""``name=value`` in a list separated by ``,`` (Teradata's ``/USER=u,PASSWORD=pw``), in
parentheses (MySQL Connector/J's ``address=(host=h)(password=pw)`` and ``(host=h,password=pw)``)
or by blanks (libpq's ``host=h password=pw``): its value up to the next ``,``, ``)`` or blank,
quoted as one."""
_ORACLE = re.compile(
    r"(?P<keep>(?:(?:thin|oci\d*|kprb):)?(?://)?)"
    r'(?P<login>[^@/?#"]*(?:/(?:"[^"]*"|[^@/?#"]*))?)@',
    re.IGNORECASE,
)
"""The start of what follows ``oracle:``: an optional driver type, then ``user[/password]@``."""
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+._\-]*):", re.DOTALL)
"""A scheme, ``_`` in it too: SQLAlchemy's ``oracle+cx_oracle:``."""
_LOGIN_FIRST = re.compile(r"[^:/\\?#@]+:[^/\\?#@]*@|[^:/\\?#@\s]+@(?=[^/\\?#@]*[/\\])")
"""``user:password@`` or a token's ``TOKEN@host/`` at the very start of a location (no scheme,
or one taken for it)."""
_AUTHORITY_END = re.compile(r"[/?#]")
_AUTHORITY_END_OR_BACKSLASH = re.compile(r"[/?#\\]")
_AT = ("@", "\uff20", "\ufe6b")
"""``@`` and the two characters NFKC makes ``@`` of."""
_CONTAINERS = frozenset({"abfss", "abfs", "wasbs", "wasb"})
"""Schemes whose userinfo is an Azure container, not a user."""
_HIDDEN = "\x00"
"""What stands for a secret parameter's characters while the userinfo is looked for."""

_SECRET_WORDS = frozenset(
    {
        *CREDENTIAL_NAMES,
        *CREDENTIAL_ENDINGS,
        "passwords",
        "pass",
        "secrets",
        "tokens",
        "keys",
        "apikey",
        "privatekey",
    }
)
"""Words that make a run's parameter a secret wherever they stand in its name."""
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
"""The words of a name: ``db_password``, ``dbPassword``, ``DB-PASSWORD`` -> ``db``, ``password``."""
_TEXT_WORD = re.compile(r"[^\s\"'<>`]+(?:(?<=/)\"[^\"\n]*\"[^\s\"'<>`]*)*")
"""A word of free text that may be a location: up to a blank or quote, Oracle's quoted
``user/"password"@`` in it."""
_TEXT_URL_LOGIN = re.compile(
    r"(?<![A-Za-z0-9+._\-])(?P<scheme>[A-Za-z][A-Za-z0-9+._\-]*):"
    r"(?://(?P<login>[^/?#\s\"'<>`]*)|(?:\\\\|/\\|\\/)(?P<unc>[^/?#\\\s\"'<>`]*))[@\uff20\ufe6b]"
)
"""The userinfo of a url in free text, to the last ``@`` of its authority (as ``_userinfo``
reads a location's); each authority ends at the next ``//``, so the text is read once."""
_TEXT_ORACLE = re.compile(
    r"(?i:oracle):(?:(?:thin|oci\d*|kprb):)?(?://)?"
    r'(?P<login>[^@/?#":\s]+(?:/(?:"[^"\n]*"|[^@/?#"\s]*))?)@'
)
"""Oracle's ``user/password@`` in free text (``_ORACLE``)."""
_TEXT_PARAMETER = re.compile(
    r"(?:(?P<encoded>(?<=%3[bB])|(?<=%26))|(?<![A-Za-z0-9_.%\-]))"
    r"(?P<name>(?:[A-Za-z0-9_.\-]|(?!%3[bBdDfF]|%26)%[0-9A-Fa-f]{2}){1,128})"
    r"\s*(?:=|%3[dD])\s*"
    r"(?P<value>\{(?:[^}]|\}\})*\}?|'(?:[^'\\]|\\.)*'?|\"(?:[^\"\\]|\\.)*\"?"
    r"|(?(encoded)(?:%7[bB](?:%7[dD]%7[dD]|(?!%7[dD])\S)*(?:%7[dD])?"
    r"|(?:(?!%3[bB]|%26)[^\s;&,)#'\"])*)|[^\s;&,)#'\"]*))",
    re.DOTALL,
)
"""``name=value`` in free text: its value up to a blank or ``; & , ) #`` (or their escapes
after an escaped separator: ``t%3Bpassword%3DPW%3B``), or quoted, or braced."""

Span = tuple[int, int]


def without_credentials(location: str) -> str:
    """``location`` with every credential in it taken out (see the module's docstring)."""
    secret = _secret_parameters(location)
    hidden = _spliced(location, secret, lambda start, end: _HIDDEN * (end - start))
    login = _login(hidden, 0)
    spans = sorted([*secret, login] if login else secret)
    return _spliced(location, spans, lambda start, end: "") if spans else location


def without_secret_parameters(text: str) -> str:
    """``text`` without any ``;name=value``, ``?name=value`` or ``&name=value`` whose name
    says it holds a secret (also a name already made of a location, whose percent-encoding is
    decoded: ``t%3Bpassword%3DPW`` is named ``t;password=PW``)."""
    spans = _secret_parameters(text)
    return _spliced(text, spans, lambda start, end: "") if spans else text


def is_secret_parameter(name: str) -> bool:
    """Whether a run's parameter called ``name`` holds a secret: a name
    :func:`is_credential_name` calls one, or one with a secret word in it (``db_password_file``,
    ``privateKeyPath``, ``auth_mode``: masking a harmless value costs less than sending a
    secret one)."""
    words = {word.lower() for word in _WORDS.findall(name)}
    return is_credential_name(name) or not words.isdisjoint(_SECRET_WORDS)


def masked(text: str, *, location: bool = False) -> str:
    """``text`` (a parameter's value, an error's message or stack trace) with each credential
    in it the location rule knows shown as ``***``: the userinfo of any url in it
    (``postgresql://***@db/sales``), Oracle's ``***@``, and the value of each ``name=value``
    whose name holds a secret (``password=***``). Its value ends at a blank, or is quoted or
    braced; with ``location`` (a parameter's value, which may be a connection string) a value
    also runs as in a location (``;Pwd=two words;``)."""
    if "=" not in text and "%3" not in text and not any(at in text for at in _AT):
        return text  # every form above needs one of them: most parameters and errors are done
    found = [*_TEXT_PARAMETER.finditer(text)]
    if location:
        found += [*_PARAMETER.finditer(text), *_LISTED.finditer(text)]
    spans = [
        (match.start("value"), match.end("value"), "***")
        for match in found
        if match["value"] and is_credential_name(match["name"])
    ]
    # A '@' in a secret value (password=p@ss) is the value's, not the end of a userinfo.
    hidden = _spliced(text, sorted(s[:2] for s in spans), lambda a, b: _HIDDEN * (b - a))
    spans += [(start, end, "***@") for start, end in _text_logins(hidden)]
    merged: list[tuple[int, int, str]] = []
    for start, end, mask in sorted(spans):
        if merged and start < merged[-1][1]:  # one secret read two ways: masked once
            last = merged.pop()
            start, end, mask = last[0], max(end, last[1]), last[2]
        merged.append((start, end, mask))
    kept: list[str] = []
    at = 0
    for start, end, mask in merged:
        kept += (text[at:start], mask)
        at = end
    return "".join(kept) + text[at:]


def _text_logins(text: str) -> list[Span]:
    """Where the userinfo (with its ``@``) of each location written in ``text`` is: a url's
    (any scheme, behind ``jdbc:`` too), Oracle's ``user/password@``, and a network path's,
    a ``user:password@`` or a ``TOKEN@host/`` starting a blank- or quote-delimited word."""
    spans: list[Span] = []
    for url in _TEXT_URL_LOGIN.finditer(text):
        login = "login" if url["login"] is not None else "unc"
        if url["scheme"].lower() in _CONTAINERS and ":" not in url[login]:
            continue  # abfss://container@account: the container is no credential
        spans.append((url.start(login), url.end()))
    spans += [(found.start("login"), found.end()) for found in _TEXT_ORACLE.finditer(text)]
    for word in _TEXT_WORD.finditer(text):
        found = _leading_login(word[0], word.start())
        if found is not None:
            spans.append(found)
    return spans


def _spliced(text: str, spans: list[Span], instead: Callable[[int, int], str]) -> str:
    """``text`` with each of the sorted ``spans`` (which may overlap) replaced by what
    ``instead`` gives for it; one pass, however many spans."""
    kept: list[str] = []
    at = 0
    for start, end in spans:
        if end <= at:
            continue
        start = max(start, at)
        kept += (text[at:start], instead(start, end))
        at = end
    kept.append(text[at:])
    return "".join(kept)


def _secret_parameters(text: str) -> list[Span]:
    """Where the parameters that hold a secret are, each with its separator (a ``?`` is
    kept: what follows is still a query), sorted."""
    if "=" not in text and "%3" not in text:
        return []
    spans = []
    for match in _PARAMETER.finditer(text):
        sep = match["sep"]
        if not is_credential_name(match["name"]):
            continue
        if sep == ":" and not text.startswith(";", match.end()):
            continue  # ':' starts a parameter only in DB2's 'db:user=u;password=p;'
        start = match.start() + (len(sep) if sep in ("?", "%3F", "%3f") else 0)
        spans.append((start, match.end()))
    for match in _LISTED.finditer(text):
        if is_credential_name(match["name"]):
            end = match.end()
            closed = match["sep"] == "(" and text.startswith(")", end)
            spans.append((match.start(), end + 1 if closed else end))  # '(password=pw)' whole
    return sorted(spans)


def _login(text: str, offset: int) -> Span | None:
    """Where the user and password of ``text`` (which starts at ``offset`` of the location)
    are, with their ``@``; None when it names none."""
    blank = len(text) - len(text.lstrip())  # ' postgres://u:pw@h' is still a url to a reader
    text, offset = text[blank:], offset + blank
    scheme = _SCHEME.match(text)
    if scheme is None or scheme.end() == 2:  # no scheme, or a drive letter
        return _leading_login(text, offset)
    lower = scheme.group(1).lower()
    rest, at = text[scheme.end() :], offset + scheme.end()
    if lower == "jdbc":
        return _login(rest, at)
    if lower == "oracle":
        login = _ORACLE.match(rest)
        if login is None or not login["login"]:
            return None  # 'oracle:thin:@host:1521:sid' names no user
        return at + login.start("login"), at + login.end()
    if rest.startswith("//"):
        return _userinfo(rest[2:], at + 2, container=lower in _CONTAINERS)
    if rest[:2] in ("\\\\", "/\\", "\\/"):  # 'postgres:\\\\u:pw@h', 'postgres:/\\u:pw@h'
        return _userinfo(rest[2:], at + 2, container=lower in _CONTAINERS, backslash=True)
    found = _LOGIN_FIRST.match(text)
    return (offset, offset + found.end()) if found else None


def _leading_login(text: str, offset: int) -> Span | None:
    """A location with no scheme: a network path (``//host/share``, ``\\\\host\\share``) or
    ``user:password@host/...``."""
    if text[:2] in ("//", "\\\\", "/\\", "\\/"):
        return _userinfo(text[2:], offset + 2, container=False, backslash=True)
    found = _LOGIN_FIRST.match(text)
    return (offset, offset + found.end()) if found else None


def _userinfo(rest: str, offset: int, *, container: bool, backslash: bool = False) -> Span | None:
    """The userinfo of the authority ``rest`` starts with (what follows ``//``)."""
    found = (_AUTHORITY_END_OR_BACKSLASH if backslash else _AUTHORITY_END).search(rest)
    authority = rest[: found.start()] if found else rest
    at = max(authority.rfind(char) for char in _AT)
    if at < 0:
        return None
    if container and ":" not in authority[:at]:
        return None  # abfss://container@account...: the container is no credential
    return offset, offset + at + 1
