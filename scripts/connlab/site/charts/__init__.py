"""Charts: kinds, specs and compiled drawings.

kinds.py (with scaling.py and usl.py) builds each chart kind's Vega-Lite spec with Altair; spec_template.py
and cache.py keep one spec per kind and write a chart's rows into it, and cache the SVG fallbacks; book.py
collects a render's charts and makes them at once; html.py writes a chart's block for a page. compiled.py
and expressions.py compile each kind to Vega, and Vega's expressions to functions, ahead of time with node
(compile_vega.mjs, compile_expressions.mjs); vendor.py copies the chart libraries into the site;
constants.json holds what this code and site_src/assets/charts.js share; lazy.py defers Altair's import.
"""
