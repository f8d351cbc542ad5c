"""The site stage: build/data -> build/docs -> build/site, in three rooms and one shared module.

- render/: pages from facts. Jinja renders the articles and pages (Markdown, for MkDocs) and each machine's
  page (an HTML fragment: render/fragments.py), with the tables, verdicts and snippets they show; machine
  pages are cached by their inputs (render/machine_pages.py).
- charts/: the chart kinds (Altair specs), their templates and cache, the chart blocks a page holds, and the
  drawings compiled ahead of time (Vega and its expressions, by node) with the vendored chart libraries.
- publish/: MkDocs (the human pages and the machine pages' shell, through its hook API) and the stamping of
  every machine page into the shell.
- layout.py: where each page and file of the site lives (folders, URLs, the shell's markers), which all
  three rooms share.
"""
