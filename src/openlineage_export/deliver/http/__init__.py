"""The ``http`` destination kind: events POSTed to an OpenLineage server.

``destination.py`` is the kind (its config and destination), ``settings.py`` its settings,
``address.py`` and ``signs.py`` what its url and first answers say; ``held.py`` and
``recall.py`` ask a server what it holds and what it lost. The HTTP clients as httpx draws
them: ``poster.py`` is the interface, one module per client (``curl_client.py`` with
``curl_transfer.py``, ``aiohttp_client.py``, ``httpx_client.py``), ``client.py`` picks one.
"""
