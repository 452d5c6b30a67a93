"""The export's benchmark: ``python -m bench.run [--quick]`` from the repository (see
docs/performance.md). ``run.py`` wires the parts (``parts/``, a module each), each measurement
runs in a child (``measure/``), ``harness.py`` is the plumbing (cached trails written by
``hubwriter.synth``, the Go sink and load generator). A package, so that its modules and the
repository's ``hubwriter`` import by name, without touching ``sys.path``."""
