"""The export's benchmark: ``python -m bench.run [--quick]`` from the repository (see
docs/performance.md). A package, so that its modules and the tests' shared support
(``tests.support``) import by name, without touching ``sys.path``."""
