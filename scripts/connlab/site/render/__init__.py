"""Pages from facts: build/data -> build/docs.

all_pages.py renders every page and writes build/docs (render_site); renderer.py renders one page
(PageRenderer: an article, a page, a machine's view) in the Jinja environment of environment.py, from the
data files site_data.py reads; views.py splits an article's facts into its two views (across machines, one
machine); machine_pages.py keeps machine pages by their inputs and renders the due ones, in worker processes
when many; fragments.py turns a machine page's Markdown into HTML; code_blocks.py converts the articles'
scripts; tables.py (points and fits), verdicts.py and verdict_html.py (the verdict tables, as HTML),
snippets.py and formats.py make what the templates show; wrapped_tables.py is the Markdown extension that
writes tables in Material's scroll wrappers.
"""
