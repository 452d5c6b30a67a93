"""What librdkafka says, as our text: a broker's own words need not be UTF-8.

``KafkaError.str()`` decodes librdkafka's message strictly, and a message may quote a broker
(a SASL authentication error carries the broker's text, any bytes): one byte that is no UTF-8
was a ``UnicodeDecodeError`` out of the delivery reports' serving, the export failed for good.
Every error's words are read here: Unicode (U+FFFD where a byte is none), and bounded.
"""

from __future__ import annotations

from confluent_kafka import KafkaError

SAID_LIMIT = 500
"""The most characters of librdkafka's message kept (a broker's text may be 32 KB)."""


def said(error: KafkaError) -> str:
    """What ``error`` says, as Unicode, at most :data:`SAID_LIMIT` characters."""
    try:
        text = error.str()
    except UnicodeDecodeError as exc:
        text = bytes(exc.object).decode("utf-8", "replace")
    return text if len(text) <= SAID_LIMIT else text[:SAID_LIMIT] + "..."
