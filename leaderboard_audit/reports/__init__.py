"""Renderers of a report-v1 dict: terminal tables, Markdown, HTML."""
