"""MkDocs and the stamping of machine pages: build/docs -> build/site.

build.py runs MkDocs on the human pages and the shell, copies what changed into the site, stamps each
machine page into the shell and adds machine pages to the search index (search.py: what a machine page's
entry holds); hooks.py is everything MkDocs is asked through its hook API (named in mkdocs.yml);
preloads.py starts a chart page's requests from its head.
"""
