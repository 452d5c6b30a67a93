"""The demo workspace (``acme-analytics/``) and what writes it (``make_demo.py``)."""
