"""The default HTTP client: libcurl (through pycurl's multi interface) on the engine's loop.

Measured for this workload (one ~2 KB POST per event, keep-alive, tens in flight; see
docs/performance.md) libcurl spends about 40 % of aiohttp's CPU per request and half of
pyreqwest's: the request is built, sent, parsed and pooled in C, and Python only sees the
socket and timer changes and the transfer's end.

How it is driven: libcurl tells us which sockets to watch (``CURLMOPT_SOCKETFUNCTION``) and
when to wake it (``CURLMOPT_TIMERFUNCTION``); we hand those to the event loop
(``add_reader``/``add_writer``, ``call_later``) and call ``socket_action`` when they fire. No
thread, no polling. A request that is cancelled (its deadline, a cancel) is taken out of the
multi handle at once, which closes its connection.

What libcurl is told, so that it does nothing on its own: no redirects (``FOLLOWLOCATION``
off), HTTP and HTTPS only, no ``~/.netrc``, no proxy but the one :func:`environment_proxy`
names (``CURLOPT_PROXY`` and ``CURLOPT_NOPROXY`` always set, so it never reads the environment
itself), custom headers never sent to a proxy, the system's CAs (as Python's ``ssl`` finds
them) or the ``caBundle``, and no decoding of answers. Only :data:`BODY_LIMIT` bytes of an
answer are read: past that the transfer is aborted.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pycurl

from ...guards.proxy import environment_proxy
from .curl_transfer import Transfer, curl_error, system_cas
from .poster import BODY_LIMIT, Answer, ssl_context

_READABLE = select.EPOLLIN | select.EPOLLHUP | select.EPOLLRDHUP if hasattr(select, "epoll") else 0
_EPOLL = (
    {
        pycurl.POLL_IN: select.EPOLLIN | select.EPOLLRDHUP,
        pycurl.POLL_OUT: select.EPOLLOUT,
        pycurl.POLL_INOUT: select.EPOLLIN | select.EPOLLRDHUP | select.EPOLLOUT,
    }
    if hasattr(select, "epoll")
    else {}
)


class CurlPoster:
    """libcurl's multi interface on the running event loop, a keep-alive pool of
    ``concurrency`` connections."""

    def __init__(
        self, *, verify: bool | Path, concurrency: int, timeout: float, user_agent: str
    ) -> None:
        if isinstance(verify, Path):
            ssl_context(verify)  # a bundle with no CA in it is a configuration error, now
        self._verify = verify
        self._timeout_ms = max(1, round(timeout * 1000))
        self._concurrency = max(1, concurrency)
        self._user_agent = user_agent
        self._loop: asyncio.AbstractEventLoop | None = None
        self._multi: pycurl.CurlMulti | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._soon = False
        self._watched: dict[int, int] = {}
        self._epoll: select.epoll | None = None
        self._idle: list[Transfer] = []
        self._busy: dict[pycurl.Curl, Transfer] = {}
        self._proxies: dict[str, str] = {}

    async def start(self) -> None:
        """The multi handle, bound to the running loop."""
        self._loop = asyncio.get_running_loop()
        multi = pycurl.CurlMulti()
        multi.setopt(pycurl.M_SOCKETFUNCTION, self._on_socket_change)
        multi.setopt(pycurl.M_TIMERFUNCTION, self._on_timer_change)
        multi.setopt(pycurl.M_MAXCONNECTS, self._concurrency)
        self._multi = multi
        if _EPOLL and _loop_watches_fds(self._loop):
            self._epoll = select.epoll()
            self._loop.add_reader(self._epoll.fileno(), self._on_epoll)

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], *, once: bool = False
    ) -> Answer:
        """One POST; the body prefix is read, the rest is never downloaded. ``once``: on a
        connection of its own (libcurl resends a request on a reused connection that answered
        nothing; never on a new one)."""
        return await self._request(url, headers, body, once=once)

    async def get(self, url: str, headers: Mapping[str, str], limit: int = BODY_LIMIT) -> Answer:
        """One GET, on the same pool as the POSTs: the same deadline and proxy."""
        return await self._request(url, headers, None, limit)

    async def _request(
        self,
        url: str,
        headers: Mapping[str, str],
        body: bytes | None,
        limit: int = BODY_LIMIT,
        *,
        once: bool = False,
    ) -> Answer:
        multi, loop = self._multi, self._loop
        assert multi is not None and loop is not None, "start() first"
        transfer = self._idle.pop() if self._idle else self._new_transfer()
        curl = transfer.curl
        self._aim(transfer, url, headers, body)
        transfer.limit = limit
        if transfer.fresh != once:
            curl.setopt(pycurl.FRESH_CONNECT, 1 if once else 0)
            transfer.fresh = once
        done = transfer.done = loop.create_future()
        self._busy[curl] = transfer
        multi.add_handle(curl)
        finished = False
        try:
            code = await done
            finished = True
        finally:
            if not finished:  # cancelled: its deadline, or the export's cancel
                if self._busy.pop(curl, None) is not None and self._multi is not None:
                    multi.remove_handle(curl)  # aborts the transfer, closes its connection
                if self._multi is not None:
                    self._idle.append(transfer)
        self._idle.append(transfer)
        if code and not (code == pycurl.E_WRITE_ERROR and transfer.overflow):
            raise curl_error(code, curl)
        return transfer.answer(curl.getinfo(pycurl.RESPONSE_CODE))

    def _aim(
        self, transfer: Transfer, url: str, headers: Mapping[str, str], body: bytes | None
    ) -> None:
        """Set ``transfer`` up for this request: only what differs from its last one."""
        curl = transfer.curl
        if transfer.url != url:
            curl.setopt(pycurl.URL, url)
            if url not in self._proxies:
                self._proxies[url] = environment_proxy(url) or ""
            curl.setopt(pycurl.PROXY, self._proxies[url])
            transfer.url = url
        if transfer.headers is not headers:
            curl.setopt(pycurl.HTTPHEADER, [f"{k}: {v}" for k, v in headers.items()] + ["Expect:"])
            transfer.headers = headers
        if body is None:
            if not transfer.get:
                curl.setopt(pycurl.HTTPGET, 1)
                transfer.get = True
        else:
            if transfer.get:
                curl.setopt(pycurl.POST, 1)
                transfer.get = False
            curl.setopt(pycurl.POSTFIELDS, body)
        if transfer.size:
            transfer.body = []
            transfer.size = 0
            transfer.overflow = False
        transfer.header_lines.clear()

    async def close(self) -> None:
        """Abort what is in flight, close every connection, stop watching the sockets."""
        multi, loop = self._multi, self._loop
        if multi is None or loop is None:
            return
        for curl, transfer in list(self._busy.items()):
            multi.remove_handle(curl)
            if transfer.done is not None and not transfer.done.done():
                transfer.done.cancel()
        self._busy.clear()
        for transfer in self._idle:
            transfer.curl.close()
        self._idle.clear()
        multi.close()
        self._multi = None
        if self._timer is not None:
            self._timer.cancel()
        if self._epoll is not None:
            loop.remove_reader(self._epoll.fileno())
            self._epoll.close()
            self._epoll = None
        else:
            for fd in self._watched:
                loop.remove_reader(fd)
                loop.remove_writer(fd)
        self._watched.clear()

    def _new_transfer(self) -> Transfer:
        curl = pycurl.Curl()
        transfer = Transfer(curl)
        curl.setopt(pycurl.POST, 1)
        curl.setopt(pycurl.FOLLOWLOCATION, 0)
        curl.setopt(pycurl.PROTOCOLS, pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS)
        curl.setopt(pycurl.NETRC, pycurl.NETRC_IGNORED)
        curl.setopt(pycurl.NOPROXY, "")  # "" = the proxy we set is used; no_proxy is not read
        curl.setopt(pycurl.PROXY, "")
        curl.setopt(pycurl.HEADEROPT, pycurl.HEADER_SEPARATE)  # our headers never to a proxy
        curl.setopt(pycurl.USERAGENT, self._user_agent)
        curl.setopt(pycurl.NOSIGNAL, 1)
        curl.setopt(pycurl.TIMEOUT_MS, self._timeout_ms)  # the whole request, answer included
        curl.setopt(pycurl.WRITEFUNCTION, transfer.on_body)
        curl.setopt(pycurl.HEADERFUNCTION, transfer.header_lines.append)
        if self._verify is False:
            curl.setopt(pycurl.SSL_VERIFYPEER, 0)
            curl.setopt(pycurl.SSL_VERIFYHOST, 0)
        elif isinstance(self._verify, Path):
            curl.setopt(pycurl.CAINFO, str(self._verify))
            curl.setopt(pycurl.CAPATH, "")
        else:
            system_cas(curl)
        return transfer

    # -- libcurl's wishes, turned into the loop's callbacks --------------------------------

    def _on_socket_change(self, what: int, fd: int, multi: Any, data: Any) -> None:
        """libcurl wants ``fd`` watched for reading/writing, or no more."""
        if self._epoll is not None:
            # One epoll of our own, watched by the loop as one reader: changing what it
            # watches is a system call, not a loop registration (a socket is added and
            # removed once per request, as libcurl parks idle connections).
            flags = _EPOLL.get(what, 0)
            before = self._watched.get(fd)
            if not flags:
                if before is not None:
                    del self._watched[fd]
                    with contextlib.suppress(OSError):
                        self._epoll.unregister(fd)
            elif before is None:
                self._watched[fd] = flags
                self._epoll.register(fd, flags)
            elif before != flags:
                self._watched[fd] = flags
                self._epoll.modify(fd, flags)
            return
        loop = self._loop
        assert loop is not None
        old = self._watched.get(fd, 0)
        want = 0 if what == pycurl.POLL_REMOVE else what
        if old & pycurl.POLL_IN and not want & pycurl.POLL_IN:
            loop.remove_reader(fd)
        if old & pycurl.POLL_OUT and not want & pycurl.POLL_OUT:
            loop.remove_writer(fd)
        if want & pycurl.POLL_IN and not old & pycurl.POLL_IN:
            loop.add_reader(fd, self._act, fd, pycurl.CSELECT_IN)
        if want & pycurl.POLL_OUT and not old & pycurl.POLL_OUT:
            loop.add_writer(fd, self._act, fd, pycurl.CSELECT_OUT)
        if want:
            self._watched[fd] = want
        else:
            self._watched.pop(fd, None)

    def _on_timer_change(self, milliseconds: int) -> None:
        """libcurl wants ``socket_action`` on a timeout in ``milliseconds`` (-1: never).

        A wake-up earlier than asked is harmless (libcurl finds nothing due and asks again),
        so a pending one that comes sooner is kept rather than replaced; "now" (each new
        request asks for it) is the loop's next turn, without a timer."""
        loop = self._loop
        if loop is None or milliseconds < 0:
            return
        # Never socket_action from inside libcurl's own callback: on a later turn.
        if milliseconds == 0:
            if not self._soon:
                self._soon = True
                loop.call_soon(self._on_soon)
            return
        when = loop.time() + milliseconds / 1000
        timer = self._timer
        if timer is not None:
            if timer.when() <= when:
                return
            timer.cancel()
        self._timer = loop.call_at(when, self._on_timeout)

    def _on_soon(self) -> None:
        self._soon = False
        self._act(pycurl.SOCKET_TIMEOUT, 0)

    def _on_timeout(self) -> None:
        self._timer = None
        self._act(pycurl.SOCKET_TIMEOUT, 0)

    def _on_epoll(self) -> None:
        """Our epoll is readable: hand each ready socket to libcurl."""
        epoll, multi = self._epoll, self._multi
        if epoll is None or multi is None:
            return
        for fd, events in epoll.poll(0):
            mask = 0
            if events & _READABLE:
                mask |= pycurl.CSELECT_IN
            if events & select.EPOLLOUT:
                mask |= pycurl.CSELECT_OUT
            if events & select.EPOLLERR:
                mask |= pycurl.CSELECT_ERR
            multi.socket_action(fd, mask)
        self._collect(multi)

    def _act(self, fd: int, events: int) -> None:
        multi = self._multi
        if multi is None:
            return
        multi.socket_action(fd, events)
        self._collect(multi)

    def _collect(self, multi: Any) -> None:
        """Hand the finished transfers' results to their requests."""
        busy = self._busy
        while True:
            queued, ok, failed = multi.info_read()
            for curl in ok:
                self._finish(multi, busy.pop(curl), 0)
            for curl, code, _ in failed:
                self._finish(multi, busy.pop(curl), code)
            if not queued:
                return

    @staticmethod
    def _finish(multi: Any, transfer: Transfer, code: int) -> None:
        multi.remove_handle(transfer.curl)
        done = transfer.done
        if done is not None and not done.done():
            done.set_result(code)


def _loop_watches_fds(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether the loop can watch a file descriptor (a selector loop can; Windows' proactor
    cannot)."""
    return isinstance(loop, asyncio.SelectorEventLoop) or type(loop).__module__.startswith("uvloop")
