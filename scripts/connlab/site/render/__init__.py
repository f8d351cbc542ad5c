"""Pages from facts: build/data -> build/docs.

renderer.py renders every page (PageRenderer, render_site); views.py splits an article's facts into its
two views (across machines, one machine); machine_pages.py keeps machine pages by their inputs and renders
the due ones, in worker processes when many; fragments.py turns a machine page's Markdown into HTML;
tables.py (points and fits), verdicts.py and verdict_html.py (the verdict tables, as HTML), snippets.py and
formats.py make what the templates show; wrapped_tables.py is the Markdown extension that writes tables in
Material's scroll wrappers.
"""
