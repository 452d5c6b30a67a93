"""The guards: who may decide what, and where a key may go (docs/security.md).

A workspace's files are written by whoever pushed last: what they say is data. These modules
hold the rule where untrusted values meet the user's: ``guards/trust.py`` (what a workspace may
decide, where a key may go), ``guards/secrecy.py`` (a secret resolved, redacted, sent only over a
safe transport), ``addresses.py`` (a url's host as the client reads it: the one spelling
origins compare in) and ``proxy.py`` (the proxy our client really uses). The one way into and
out of files is the room below ``host/``: ``files/``.
"""
