"""What the first answers of an http export say about its address, said once, at the first sign.

A wrong address costs a person 30 s and 20 lines of run ids before anything names it. The signs
we read, each said in one line the moment it shows (``Supplied.on_warning``, ``on_notice``), once:

- every event so far refused with 404: the url (or the endpoint) is not the server's lineage
  API: Marquez's admin port, a path too many (a url that already ends with the endpoint);
- nothing listens at the address: a wrong url, or a server starting (the retries go on, for
  ``openlineage.retry.maxTime``: it may come up);
- a server that speaks no TLS addressed with ``https://``: no retry can change that, so the
  export stops at once (:func:`no_tls`).

And a server's answer as a run's reason (:func:`describe_answer`): an HTML page is a stranger's
markup, repeated in every run it refused; it is named by its title, never printed.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from urllib.parse import urlsplit, urlunsplit

from ...guards.secrecy import Redactor
from .poster import Answer

REASON_LIMIT = 500
"""The most characters of a server's answer shown as a reason."""

TITLE_LIMIT = 80
"""The most characters of an HTML page's title shown."""

PHRASE_LIMIT = 200
"""The most characters of a reason phrase shown (``Bad Request``: a server's may be 100 KB)."""

_HTML_START = re.compile(rb"\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html)[\s>]", re.I | re.S)


def describe_answer(answer: Answer, redact: Redactor) -> str:
    """A refusal's reason: the status, and what the server said in one line (an HTML page by
    its title), secrets redacted, cut at :data:`REASON_LIMIT`."""
    if 300 <= answer.status < 400 and answer.location:
        where = _cut(answer.location, REASON_LIMIT)
        text = f"redirects to {where}; set openlineage.url to the final address"
    elif _HTML_START.match(answer.body[:1024].removeprefix(b"\xef\xbb\xbf")):
        title = page_title(answer.body)
        words = _one_line(html.unescape(title.decode("utf-8", "replace"))) if title else ""
        words = redact(words)
        if len(words) > TITLE_LIMIT:
            words = words[:TITLE_LIMIT] + "..."
        text = f"an HTML page{f': {words!r}' if words else ''}"
    else:
        # Redact before cutting: a key straddling the cut would otherwise leave its start.
        text = redact(_one_line(answer.body.decode("utf-8", "replace")))
        if len(text) > REASON_LIMIT:
            text = text[:REASON_LIMIT] + "..."
    phrase = _cut(_one_line(answer.reason), PHRASE_LIMIT)
    return redact(f"HTTP {answer.status} {phrase}".strip() + (f": {text}" if text else ""))


def page_title(body: bytes) -> bytes | None:
    """What an HTML page's ``<title>`` holds; found with plain searches, each once over the
    body (a regular expression's lazy ``.*?`` would scan to the end from every ``<title`` of
    a page that never closes one: quadratic in the body)."""
    lower = body.lower()
    start = lower.find(b"<title")
    opened = lower.find(b">", start) if start >= 0 else -1
    end = lower.find(b"</title", opened) if opened >= 0 else -1
    return body[opened + 1 : end] if end >= 0 else None


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _one_line(text: str) -> str:
    return " ".join(text.split())


def host_port(url: str) -> str:
    """``HOST:PORT`` of ``url``, the port its scheme's when the url names none."""
    parts = urlsplit(url)
    where = parts.netloc.rpartition("@")[2]
    if parts.port is None:
        where += ":443" if parts.scheme == "https" else ":80"
    return where


def no_tls(url: str, detail: str) -> str:
    """The one line for an ``https://`` url whose server speaks no TLS."""
    plain = urlunsplit(urlsplit(url)._replace(scheme="http"))
    return (
        f"the server at {host_port(url)} does not speak TLS (the TLS handshake failed: "
        f"{detail}): use {plain}; nothing was sent"
    )


class FirstSigns:
    """Reads each answer (or its absence) until one event is accepted; says what the signs
    mean once each: ``warn`` for what stays true (kept for the summary), ``notice`` for what
    may not (a server starting)."""

    def __init__(
        self,
        url: str,
        *,
        address: str,
        retry_time: float,
        doubt: str | None,
        warn: Callable[[str], None] | None,
        notice: Callable[[str], None] | None,
    ) -> None:
        self._url = url
        self._address = address
        """What the user set the address with: ``openlineage.url`` or ``--url``."""
        self._retry_time = retry_time
        self._doubt = doubt
        """The doubt on the url said before sending (it ends with the endpoint), or None."""
        self._warn = warn
        self._notice = notice
        self._accepted = False
        self._said: set[str] = set()

    def accepted(self) -> None:
        """An event was accepted: the address is right; nothing more to read."""
        self._accepted = True

    def refused(self, answer: Answer) -> None:
        """An event was refused with this answer."""
        if answer.status != 404:
            return
        status = f"404 {answer.reason}".strip()
        cause = (
            f"as warned, {self._address} already ends with the endpoint"
            if self._doubt is not None
            else f"is {self._address} the server's address (and openlineage.endpoint its path)?"
        )
        line = f"every event so far refused with {status} by {self._url}: {cause}"
        self._once("404", line, self._warn)

    def connection_refused(self) -> None:
        """A connection to the address was refused."""
        self._once(
            "refused",
            f"nothing listens at {host_port(self._url)}: is {self._address} right, or is the "
            f"server starting? (trying again for up to {self._retry_time:g} s, "
            "openlineage.retry.maxTime)",
            self._notice,
        )

    def _once(self, sign: str, line: str, say: Callable[[str], None] | None) -> None:
        if self._accepted or sign in self._said or say is None:
            return
        self._said.add(sign)
        say(line)
