"""What the tests and the benchmark share: the plain openlineage-python reference
(``ol_plain``), the synthetic trail generator (``synth_trail``, also a command), a virtual
clock, holds on a running export, network namespaces and one Chromium.

Imported as ``support.x`` (pytest's ``pythonpath`` puts ``tests/`` first; the benchmark, run
as ``python -m bench.run`` from the repository, as ``tests.support.x``).
"""
