"""Judge and arena leaderboards (issue 47; docs/audits.md, "Judge and arena leaderboards").

Leaderboards with no fixed item set per model: Chatbot-Arena-style battles (``data``:
per-pair counts or per-battle files), aggregated by several rules (``rules``), and
published tables of model x configuration -> score (``table``). The configurations
these audits range over are the aggregation rules (arena) or the table's score
columns (length control, judge...). ``orders`` holds what both share (champions,
rank ranges, reversed adjacent pairs, Kendall tau, the exploit flag); ``bootstrap``
the resampling over battles and the Holm-adjusted identified order.

Pure numpy plus scipy's optimiser (Bradley-Terry); ``formats`` is import-light (the
pytest plugin reads it at start-up), ``session`` is the pytest glue.
"""
