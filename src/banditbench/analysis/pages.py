"""Small self-contained HTML pages (tables with a little CSS) for ``snakemake --report``.

The report shows an HTML result inline, so tables written this way are read in
the report itself instead of being offered as CSV downloads.
"""

from __future__ import annotations

import html

_STYLE = """
body { font-family: system-ui, sans-serif; font-size: 14px; margin: 1em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.4em; }
table { border-collapse: collapse; margin: 0.4em 0 1em; }
th, td { padding: 3px 10px; border-bottom: 1px solid #ddd; text-align: right; white-space: nowrap; }
th { background: #f3f3f3; text-align: left; }
tbody tr:hover { background: #f8f8ff; }
"""


def html_page(title: str, body: str) -> str:
    """A complete UTF-8 page titled ``title`` around already-escaped ``body`` markup."""
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_STYLE}</style></head>\n<body>\n{body}\n</body></html>\n"
    )
