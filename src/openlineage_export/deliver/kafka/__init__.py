"""The ``kafka`` destination kind: events produced to a topic with librdkafka.

``destination.py`` is the kind, ``config.py`` its settings and config, ``brokers.py`` the
broker list as librdkafka reads it, ``acks.py`` a run's delivery reports, polled on the loop,
``said.py`` what librdkafka says, as our text.
"""
