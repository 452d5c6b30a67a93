"""Whether the server still has what the ledger says it accepted: a server that forgot.

The ledger cannot know when the server loses what it was sent (a Marquez database reset, a
restore of an older backup): it still says every run was accepted, and ``export`` would send
nothing. Where the server lets us ask, a few requests before sending tell: Marquez's read
API has the namespace (``GET /api/v1/namespaces/{namespace}``) and each run by its id
(``GET /api/v1/jobs/runs/{id}``). The namespace is asked for, then a small sample of the runs
the ledger holds as accepted, the last of the trail first.

- The namespace is gone (404), or hidden (deleted through the API): everything in it is gone.
- A run of the sample is gone: the server lost at least the latest runs.

Either way the answer is one sentence for the user, and the export sends every run again
(the ledger cannot tell which of the runs not asked about survived; sending one the server
has again only updates it: same run id, same events).

Only a Marquez answer counts: a 404 with Marquez's JSON error (``{"code": 404, ...}``). Any
other server (DataHub, Atlan, a proxy), an answer we do not understand, a refusal, or no
answer at all (the export itself says so as it posts) means we cannot ask: nothing is said and
nothing changes. The requests go through the destination's own client
(:class:`~.poster.Poster`: its proxy and body limit) under one deadline for all of them
together, and carry no API key (they read; the key goes only where the export posts), so a
server that wants one for reading is not asked either. A server that has not answered them all
by the deadline (one that trickles its answers), or a client that fails on a question in a way
of its own (a host's httpx client on a host name it cannot decode), is :class:`CannotAsk`: one
line for the user, and nothing changes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from urllib.parse import quote, urlsplit

import orjson

from .poster import Answer, BadCertificate, NoAnswer, NoTls, Poster, TransportFailure

SAMPLE = 5
"""Runs asked for, besides the namespace: a few requests before the export sends."""

_LINEAGE_PATH = "/api/v1/lineage"
_WHY = "a database reset, or a restore of an older backup?"
_NO_HEADERS: dict[str, str] = {}


class CannotAsk(Exception):
    """The server could not be asked (why, in a few words): said in one line; nothing changes."""


def marquez_api(events_url: str) -> str | None:
    """Marquez's API base (``.../api/v1``) for its events url, or None when it is not one."""
    parts = urlsplit(events_url)
    if parts.query or not parts.path.rstrip("/").endswith(_LINEAGE_PATH):
        return None
    return events_url.rstrip("/")[: -len("/lineage")]


async def forgotten(
    poster: Poster, events_url: str, namespace: str, run_ids: Sequence[str], *, deadline: float
) -> str | None:
    """A sentence saying what the server no longer has of what the ledger says it accepted
    (then every run is to be sent again), or None: it has all we asked about, or it is no
    Marquez. :class:`CannotAsk` when it did not answer every question within ``deadline``
    seconds, all of them together, or the client failed on one. ``poster`` is started."""
    base = marquez_api(events_url)
    if base is None or not run_ids:
        return None
    try:
        async with asyncio.timeout(deadline):
            return await _ask(poster, base, namespace, run_ids)
    except TimeoutError:
        raise CannotAsk(f"it did not answer within {deadline:g} s, openlineage.timeout") from None
    except (NoAnswer, BadCertificate, NoTls, TransportFailure):
        return None  # no answer: the export itself will say so, as it posts
    except Exception as exc:  # a host's client (or its stand-in) that cannot GET
        detail = " ".join(str(exc).split())[:200]
        raise CannotAsk(f"{type(exc).__name__}{': ' + detail if detail else ''}") from None


async def _ask(poster: Poster, base: str, namespace: str, run_ids: Sequence[str]) -> str | None:
    gone = _namespace_gone(
        await poster.get(f"{base}/namespaces/{quote(namespace, safe='')}", _NO_HEADERS)
    )
    if gone is None:
        return None
    if gone:
        return (
            f"the server no longer has the namespace {namespace!r} that the ledger "
            f"says its runs were sent to ({_WHY}): sending every run again"
        )
    missing = []
    for run_id in run_ids:
        found = _gone(await poster.get(f"{base}/jobs/runs/{quote(run_id, safe='')}", _NO_HEADERS))
        if found is None:
            return None
        if found:
            missing.append(run_id)
    if not missing:
        return None
    return (
        f"the server no longer has {len(missing)} of the last {len(run_ids)} runs the "
        f"ledger says it accepted (run id {missing[0]}) ({_WHY}): sending every run again"
    )


def _namespace_gone(answer: Answer) -> bool | None:
    """True: gone or hidden; False: there; None: not an answer we understand."""
    if answer.status == 200:
        body = _json(answer)
        if not isinstance(body, dict) or "name" not in body:
            return None
        return body.get("isHidden") is True
    return _gone(answer)


def _gone(answer: Answer) -> bool | None:
    """True: Marquez says it has no such thing; False: it has it; None: cannot tell."""
    if answer.status == 200:
        return False
    if answer.status == 404:
        body = _json(answer)
        if isinstance(body, dict) and body.get("code") == 404 and "message" in body:
            return True
    return None


def _json(answer: Answer) -> object:
    try:
        return orjson.loads(answer.body)
    except orjson.JSONDecodeError:
        return None
