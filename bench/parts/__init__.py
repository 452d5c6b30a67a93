"""The benchmark's parts, a module each (``python -m bench.run --parts 0123456789``):

0 ``clients`` (the HTTP clients alone), 1 ``translation``, 2 ``delivery`` (a Go sink at 5 ms),
3 ``marquez``, 4 ``incremental`` (an unchanged re-export), 5 ``memory`` (a dry run's peak RSS),
6 ``kafka``, 7 ``known`` (a trail Marquez already holds), 8 ``backfill``, 9 ``batches``
(the spec's batches: the Go sink, the real Feast). Each is a function
``part_*`` that measures through children (``bench.measure``) and adds its rows and targets to
the report.
"""
