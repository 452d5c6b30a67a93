"""What the tests share beyond ``helpers``: the plain openlineage-python reference
(``ol_plain``, also the benchmark's), a virtual clock, holds on a running export, network
namespaces, one Chromium, a real ``export --watch``.

Imported as ``support.x`` (pytest's ``pythonpath`` puts ``tests/`` first). Workspaces, large
synthetic trails included, are written by ``hubwriter`` (beside ``src/``).
"""
