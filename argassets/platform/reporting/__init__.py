"""Reporting: Markdown tables, plots, results pages and generated README sections."""
