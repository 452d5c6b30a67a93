"""The one way into and out of files.

Every file the exporter reads or writes goes through this room: the workspace's (walked from
its root one name at a time, never through a link that leaves it, regular files only, never
blocking) and the user's own (in the user's folders, or named by the user). It sits below
``host/``, which reads the workspace's settings through it; what a file *means* is decided
above (``host/``, ``hub/``, ``guards/``).
"""
