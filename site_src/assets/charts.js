/*
 * Connection Lab charts: render every <figure class="connlab-chart"> with vega-embed.
 *
 * Each figure carries its Vega-Lite spec inline (see connlab/site/charts/html.py):
 *
 *   <figure class="connlab-chart" id="chart-ID">
 *   <div class="connlab-chart__view"></div>
 *   <script type="application/json" class="connlab-chart__spec">{...}</script>
 *   <noscript><img class="connlab-chart__fallback" src="..." alt="..."></noscript>
 *   <figcaption>...</figcaption>
 *   </figure>
 *
 * Charts follow Material's light/dark palette, re-render when it is toggled, and are
 * rendered again after Material's instant navigation swaps the page content. In a column
 * narrower than NARROW_WIDTH the legends go under the plot, and a plot never gets narrower
 * than MIN_PLOT_WIDTH: the view scrolls sideways instead. The drawing is named by the
 * caption and described by the alt text, for assistive technology.
 * vega, vega-lite and vega-embed (which bundles vega-interpreter) are most of a page's weight: this
 * file loads them, from the site itself, only on a page that has a chart, and once per visit.
 *
 * A figure that names a compiled set and kind (data-vega-set, data-vega-kind: every chart of a kind built
 * from a template) is drawn from its kind's Vega, compiled at build time (connlab/site/charts/compiled.py)
 * in the variant this file would have compiled, with the figure's rows and params put in: no Vega-Lite
 * compile in the browser, and vega-lite.min.js is loaded only for a page with a figure that names none. Its
 * expressions are the functions written for its set at build time (connlab/site/charts/expressions.py), not
 * interpreted.
 */
(function () {
  "use strict";

  // Shared with the Python (scripts/connlab/site/charts/constants.json): the render writes the file here.
  var SHARED = {}; // connlab:constants

  var FIGURE = "figure.connlab-chart";
  var VIEW = ".connlab-chart__view";
  var SPEC = "script.connlab-chart__spec";
  var ALT = ".connlab-chart__alt";
  var BROWSER_ONLY = "connlab-chart--browser-only";
  // The downloads of a chart whose spec and rows are held by the page only (charts/html.py: a machine's
  // page), and the line that holds them, hidden until this file can make them.
  var OFFERED = "a[data-offer]";
  var DOWNLOADS_LINE = ".connlab-chart__downloads";
  // The dataset a templated spec names its rows by (spec_template.py), and its compiled Vega's data.
  var ROWS_DATASET = SHARED.rows_dataset;
  // A figure's compiled Vega: the set (its assets' name) and the kind in it (charts/html.py), and the folder of
  // the set's assets beside this file, one per variant (layout.py: COMPILED_CHARTS_SUBDIR; charts/compiled.py:
  // Variant.name).
  var COMPILED_SET = SHARED.compiled_set_attribute;
  var COMPILED_KIND = SHARED.compiled_kind_attribute;
  var COMPILED_FOLDER = "vega/";
  // The script of a compiled set's expressions' functions, beside its Vega (charts/expressions.py:
  // expressions_asset_name); it files them under the set's name here.
  var EXPRESSIONS_SCRIPT = SHARED.expressions_suffix;
  var EXPRESSIONS_GLOBAL = SHARED.expressions_global;
  // Fired on the document once a page's charts are drawn (or failed to be): what measures how long a page
  // takes to draw (scripts/bench/many_machines.py, the browser tests) waits for it.
  var CHARTS_DRAWN = "connlab:charts-drawn";
  // How many of a compiled figure's expressions were interpreted for want of a function: the browser tests
  // require none.
  var INTERPRETED = "data-interpreted-expressions";
  // Below this width (px) of the chart's column, legends go under the plot: beside it, a legend of
  // machine names takes half a phone's width from the plot.
  var NARROW_WIDTH = SHARED.narrow_width;
  // The plot area (inside the axes) never gets narrower than this; where the column cannot hold it
  // and the axes, the chart keeps this width and its view scrolls sideways.
  var MIN_PLOT_WIDTH = SHARED.min_plot_width;

  // Embeds that are live, so they can be finalized (timers, window listeners, tooltip
  // handlers released) before a re-render or once instant navigation removed them.
  var live = new Set();
  // Bumped per figure on every render, so a slow embed that finishes after a newer one
  // started is thrown away instead of overwriting it.
  var generation = new WeakMap();
  // Scheme each figure was last asked to render with (whether or not it finished).
  var requested = new WeakMap();
  var lastWidth = new WeakMap();
  // Width of each view's column when its chart was last drawn.
  var drawnWidth = new WeakMap();
  // Layout ("narrow" or "wide") and fixed plot width each figure was last rendered with.
  var layouts = new WeakMap();
  var fixedWidths = new WeakMap();
  var observed = new Set();
  // Figures waiting for their turn to be drawn (drawAll), not yet requested.
  var queued = new WeakSet();
  var resizeQueued = false;

  // Material's instant navigation re-creates every <script> inside the page content so
  // that author scripts run again, but for inline scripts it copies only the text, not
  // the attributes: the spec would lose type="application/json" and be executed as
  // JavaScript (a SyntaxError on every navigation), and lose the class we look it up
  // by. Keep the attributes of our spec scripts when Material swaps them.
  (function keepSpecScriptsInert() {
    var replaceWith = Element.prototype.replaceWith;
    Element.prototype.replaceWith = function () {
      var next = arguments[0];
      if (
        arguments.length === 1 &&
        next && next.nodeName === "SCRIPT" && !next.hasAttribute("type") &&
        this.nodeName === "SCRIPT" && this.classList.contains("connlab-chart__spec")
      ) {
        for (var i = 0; i < this.attributes.length; i++) {
          next.setAttribute(this.attributes[i].name, this.attributes[i].value);
        }
      }
      return replaceWith.apply(this, arguments);
    };
  })();

  function currentScheme() {
    return document.body.getAttribute("data-md-color-scheme") === "slate" ? "slate" : "default";
  }

  function layoutFor(width) {
    return width > 0 && width < NARROW_WIDTH ? "narrow" : "wide";
  }

  // Settings for every chart, whatever its spec says. charts/compiled.py (Variant.config) compiles the
  // templated kinds' charts with the same: change both.
  function chartConfig(layout) {
    var config = {
      // The page provides the background; the themes only set text and grid colours.
      background: "transparent",
      // Hide labels that would overlap rather than draw them over each other.
      axis: { labelOverlap: true, labelSeparation: 4 },
      // The drawing is one image to assistive technology, named and described by its figure (label): Vega's
      // ARIA attributes for every mark and guide, a description formatted for every datum, would be hidden
      // inside it, and took a tenth of the time a machine's page spent drawing. Off for the guides (aria)
      // and the marks (mark.aria): a mark left with its role but no description is an image without a name.
      aria: false,
      mark: { aria: false },
    };
    if (layout === "narrow") {
      // One entry per line under the plot, so the legend never takes width from it.
      config.legend = { orient: "bottom", direction: "vertical", labelLimit: 0 };
    }
    return config;
  }

  // A chart with no SVG drawn at build time (a machine's page) offers the view's own SVG and PNG export.
  var EXPORT_ONLY = { export: true, source: false, compiled: false, editor: false };

  // compiled: the spec is Vega compiled with the theme and config already (charts/compiled.py), which
  // vega-embed must not apply again, and whose hover it must leave off, as it does for a Vega-Lite spec.
  function embedOptions(scheme, layout, exportable, compiled) {
    var dark = scheme === "slate";
    return {
      mode: compiled ? "vega" : "vega-lite",
      hover: false,
      renderer: "svg",
      actions: exportable ? EXPORT_ONLY : false,
      theme: dark && !compiled ? "dark" : undefined,
      config: compiled ? undefined : chartConfig(layout),
      // vega-embed bundles vega-tooltip; match its look to the page.
      tooltip: { theme: dark ? "dark" : "light" },
      // Vega otherwise compiles every expression with `new Function`, which a
      // Content-Security-Policy without 'unsafe-eval' blocks: interpret the parsed
      // expressions instead (vega-embed bundles vega-interpreter for this).
      ast: true,
    };
  }

  // Single views and layers follow the width of the article column; compound specs
  // (concat, facet, repeat) keep their own sizing because "container" does not apply.
  // With fixedWidth (a number), the plot keeps that width whatever the column's.
  // charts/compiled.py (Variant.sized) sizes the compiled charts the same way: change both.
  function responsive(spec, fixedWidth) {
    if (!("mark" in spec) && !("layer" in spec)) return spec;
    var copy = Object.assign({}, spec);
    if (fixedWidth) {
      copy.width = fixedWidth;
      copy.autosize = { type: "pad" };
    } else {
      copy.width = "container";
      copy.autosize = { type: "fit-x", contains: "padding" };
    }
    return copy;
  }

  function chartId(figure) {
    return figure.id || "(figure without id)";
  }

  // Parsed afresh for every render: the compiler must never see a spec object that an
  // earlier render already went through.
  function readSpec(figure, fixedWidth) {
    var script = figure.querySelector(SPEC);
    if (!script) throw new Error("no " + SPEC + " element");
    return responsive(JSON.parse(script.textContent), fixedWidth);
  }

  function isCompiled(figure) {
    return figure.hasAttribute(COMPILED_SET) && figure.hasAttribute(COMPILED_KIND);
  }

  // The variant of the compiled set a figure is drawn with: the names charts/compiled.py gives them.
  function compiledVariant(scheme, layout, fixedWidth) {
    if (fixedWidth && fixedWidth !== MIN_PLOT_WIDTH) {
      throw new Error("no variant compiled at width " + fixedWidth);
    }
    return layout + "-" + (scheme === "slate" ? "dark" : "light") + (fixedWidth ? "-fixed" : "");
  }

  // The set's expressions' functions, loaded once per visit; where they cannot be, Vega interprets them.
  function loadExpressions(set) {
    return loadScript(COMPILED_FOLDER + set + EXPRESSIONS_SCRIPT).catch(function () {});
  }

  // An encoding's key: its mark type and its channels' code, in order (compile_expressions.mjs: encodingKey).
  function encodingKey(encode) {
    return JSON.stringify([
      encode.marktype,
      Object.keys(encode.channels).map(function (name) {
        return [name, encode.channels[name].code];
      }),
    ]);
  }

  // The view vega-embed makes for a compiled figure, handed the set's functions for its expressions. The
  // interpreter vega-embed passes (charts.js asks for it: `ast: true`) makes any the set lacks, counted in
  // interpreted.count.
  function precompiledView(set, interpreted) {
    return function (runtime, options) {
      var tables = window[EXPRESSIONS_GLOBAL] || {};
      var table = tables[set];
      var interpreter = options.expr;
      var expr = {};
      ["operator", "parameter", "event", "handler", "encode"].forEach(function (kind) {
        expr[kind] = function (ctx, expression) {
          var made = table && table[kind][kind === "encode" ? encodingKey(expression) : expression.code];
          if (made) return made.bind(ctx.functions);
          interpreted.count += 1;
          return interpreter[kind](ctx, expression);
        };
      });
      return new window.vega.View(runtime, Object.assign({}, options, { expr: expr }));
    };
  }

  // Each variant's kinds, fetched once per visit (and cached by the browser across pages: the set's name
  // changes with what it holds).
  var compiledSets = new Map();

  function fetchCompiled(set, variant) {
    var url = new URL(COMPILED_FOLDER + set + "." + variant + ".json", assetsBase || document.baseURI).href;
    if (!compiledSets.has(url)) {
      var loading = fetch(url).then(function (response) {
        if (!response.ok) throw new Error("cannot load " + url + ": " + response.status);
        return response.json();
      });
      // A failed fetch is tried again at the next render rather than remembered.
      loading.catch(function () {
        compiledSets.delete(url);
      });
      compiledSets.set(url, loading);
    }
    return compiledSets.get(url);
  }

  // The figure's chart as Vega: its kind's compiled spec (a copy: the set is shared by every chart of the
  // kind) with the figure's rows as the values of the data they are named by, and each top-level param's
  // value (and slider) in the signal Vega-Lite compiles it to.
  function compiledSpec(figure, scheme, layout, fixedWidth) {
    var set = figure.getAttribute(COMPILED_SET);
    var kind = figure.getAttribute(COMPILED_KIND);
    var own = readSpec(figure);
    var loading = [fetchCompiled(set, compiledVariant(scheme, layout, fixedWidth)), loadExpressions(set)];
    return Promise.all(loading).then(function (loaded) {
      var kinds = loaded[0];
      if (!kinds[kind]) throw new Error("no compiled chart of kind " + kind + " in " + set);
      var spec = structuredClone(kinds[kind]);
      var rows = (spec.data || []).filter(function (data) { return data.name === ROWS_DATASET; });
      if (rows.length !== 1 || !own.datasets || !Array.isArray(own.datasets[ROWS_DATASET])) {
        throw new Error("the compiled " + kind + " and the figure's spec do not share their rows");
      }
      rows[0].values = own.datasets[ROWS_DATASET];
      (own.params || []).forEach(function (param) {
        var signal = (spec.signals || []).find(function (s) { return s.name === param.name; });
        if (!signal) throw new Error("the compiled " + kind + " has no signal " + param.name);
        signal.value = param.value;
        if (param.bind) signal.bind = param.bind;
      });
      return spec;
    });
  }

  // The drawing is an image to assistive technology, named by the caption and described by the alt
  // text (charts/html.py writes both, with ids); Vega's own per-mark labels would read out every tick.
  function label(figure, view) {
    var svg = view.querySelector("svg");
    var caption = figure.querySelector("figcaption");
    var alt = figure.querySelector(ALT);
    if (!svg) return;
    svg.setAttribute("role", "img");
    svg.removeAttribute("aria-roledescription");
    if (caption && caption.id) svg.setAttribute("aria-labelledby", caption.id);
    if (alt && alt.id) svg.setAttribute("aria-describedby", alt.id);
  }

  // The drawing's whole width (axes and legends too): the width Vega gives its SVG.
  function drawingWidth(view) {
    var svg = view.querySelector("svg");
    return svg ? parseFloat(svg.getAttribute("width")) || 0 : 0;
  }

  // The plot's width as drawn: Vega's width signal, which excludes axes and legends.
  function plotWidth(result) {
    try {
      return result.view.width();
    } catch (err) {
      return undefined;
    }
  }

  function release(figure) {
    var result = figure.__connlabEmbed;
    if (!result) return;
    figure.__connlabEmbed = undefined;
    live.delete(figure);
    try {
      result.finalize();
    } catch (err) {
      // Finalizing a half-initialised view can throw; it is being discarded anyway.
    }
  }

  // The width of a figure's view (its column) and the height of its drawing. Read for every figure before
  // any is drawn again: a read after a view was changed lays the page out again, once per figure.
  function measure(figure) {
    var view = figure.querySelector(VIEW);
    return view ? { width: view.clientWidth, height: view.offsetHeight } : null;
  }

  // fixedWidth: render with that plot width instead of the column's (see MIN_PLOT_WIDTH). measured: the
  // figure's measure(), where it was read with other figures'.
  function renderFigure(figure, scheme, fixedWidth, measured) {
    var view = figure.querySelector(VIEW);
    var gen = (generation.get(figure) || 0) + 1;
    generation.set(figure, gen);
    requested.set(figure, scheme);
    try {
      if (!view) throw new Error("no " + VIEW + " element");
      var size = measured || measure(figure);
      drawnWidth.set(view, size.width);
      var layout = layoutFor(size.width);
      layouts.set(figure, layout);
      fixedWidths.set(figure, fixedWidth);
      var compiled = isCompiled(figure);
      var spec = compiled ? compiledSpec(figure, scheme, layout, fixedWidth) : readSpec(figure, fixedWidth);
      // vega-embed empties the element before drawing; hold its height meanwhile so a
      // palette switch does not make the page jump.
      if (size.height > 0) view.style.minHeight = size.height + "px";
      release(figure);
      var options = embedOptions(scheme, layout, figure.classList.contains(BROWSER_ONLY), compiled);
      var interpreted = { count: 0 };
      if (compiled) options.viewClass = precompiledView(figure.getAttribute(COMPILED_SET), interpreted);
      return Promise.resolve(spec)
        .then(function (ready) {
          // A newer render started while the compiled spec was fetched: it draws instead.
          if (generation.get(figure) !== gen || !figure.isConnected) return null;
          return window.vegaEmbed(view, ready, options);
        })
        .then(function (result) {
          if (!result) return;
          if (generation.get(figure) !== gen || !figure.isConnected) {
            result.finalize();
            return;
          }
          var width = plotWidth(result);
          // The column's width as the draw began, not read again: a read here would lay the page out
          // between one chart drawn and the next.
          if (!fixedWidth && drawnWidth.get(view) > 0 && width !== undefined && width < MIN_PLOT_WIDTH) {
            // The axes and labels left too little of the column: draw again at the minimum width.
            result.finalize();
            return renderFigure(figure, scheme, MIN_PLOT_WIDTH);
          }
          label(figure, view);
          // vega-embed's export menu opens from an icon alone: give it a name.
          var menu = view.querySelector("details > summary");
          if (menu) menu.setAttribute("aria-label", "Export this chart as SVG or PNG");
          figure.__connlabEmbed = result;
          live.add(figure);
          view.style.minHeight = "";
          figure.removeAttribute("data-render-error");
          if (compiled) figure.setAttribute(INTERPRETED, String(interpreted.count));
          // A view wider than its column scrolls: keyboard users must be able to reach it. Told from the
          // drawing's width and the column's as the draw began, not from the view's scroll width: the view is
          // laid out on its own (connlab.css: content-visibility), so reading it after every chart drawn laid
          // the page out a dozen times on a machine's page.
          if (drawingWidth(view) > drawnWidth.get(view) + 1) view.setAttribute("tabindex", "0");
          else view.removeAttribute("tabindex");
          figure.setAttribute("data-rendered-scheme", scheme);
        })
        .catch(function (err) {
          fail(figure, view, gen, err);
        });
    } catch (err) {
      fail(figure, view, gen, err);
      return Promise.resolve();
    }
  }

  function fail(figure, view, gen, err) {
    if (generation.get(figure) !== gen) return;
    if (view) view.style.minHeight = "";
    figure.removeAttribute("data-rendered-scheme");
    figure.setAttribute("data-render-error", "");
    console.error("connlab: chart " + chartId(figure) + " failed to render:", err);
  }

  // Charts in a hidden container (e.g. an inactive content tab) are drawn zero pixels
  // wide; vega-lite's "container" width only re-measures on window resize, so emit one
  // when a chart's box changes width.
  var resizeObserver =
    typeof ResizeObserver === "function"
      ? new ResizeObserver(function (entries) {
          var changed = false;
          entries.forEach(function (entry) {
            var width = Math.round(entry.contentRect.width);
            var previous = lastWidth.get(entry.target);
            lastWidth.set(entry.target, width);
            // A view's first observation is usually at the width its chart was just drawn at; but a chart
            // out of view is not laid out (connlab.css: content-visibility), and is first observed once it
            // comes near the view, at whatever width its column has by then.
            if (previous === undefined) previous = drawnWidth.get(entry.target);
            if (previous === undefined || previous === width || width === 0) return;
            var figure = entry.target.closest(FIGURE);
            // Legends move and the minimum width applies only when drawn again; a plain resize
            // event re-measures the column but keeps the spec. A narrow column is drawn again at
            // every change, since any narrowing may take the plot under its minimum width.
            var layout = layoutFor(width);
            if (
              figure && requested.has(figure) &&
              (layout === "narrow" || layout !== layouts.get(figure) || fixedWidths.get(figure))
            ) {
              renderFigure(figure, requested.get(figure));
            } else {
              changed = true;
            }
          });
          if (changed && !resizeQueued) {
            resizeQueued = true;
            requestAnimationFrame(function () {
              resizeQueued = false;
              window.dispatchEvent(new Event("resize"));
            });
          }
        })
      : null;

  var missingLibraryReported = false;

  // The chart libraries, next to this file in the site's assets. vega-lite is needed only by a figure
  // drawn from its Vega-Lite spec (one without a compiled set).
  var VEGA = "vendor/vega.min.js";
  var VEGA_LITE = "vendor/vega-lite.min.js";
  var VEGA_EMBED = "vendor/vega-embed.min.js";
  // Known only while this file first runs (instant navigation does not run it again).
  var assetsBase = document.currentScript ? new URL(".", document.currentScript.src).href : null;
  // Each library's load, by name; vega-embed's is the last one started.
  var loads = new Map();
  // Whether vega-embed was (or is being) run with vega-lite there: it takes vega-lite when it runs, so
  // one run before vega-lite was loaded (a page whose charts are all compiled) is run again after it (a
  // page with a chart that is not, reached by instant navigation).
  var embedHasVegaLite = false;

  // async = false runs the scripts in the order they were added (each needs the one before), as soon as
  // each has arrived; they are fetched at once.
  function loadScript(name, again) {
    if (!again && loads.has(name)) return loads.get(name);
    var loading = new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.async = false;
      script.src = new URL(name, assetsBase || document.baseURI).href;
      script.onload = resolve;
      script.onerror = function () {
        reject(new Error("cannot load " + script.src));
      };
      document.head.appendChild(script);
    });
    loads.set(name, loading);
    return loading;
  }

  function loadLibraries(withVegaLite) {
    var loading = [loadScript(VEGA)];
    if (withVegaLite) loading.push(loadScript(VEGA_LITE));
    var again = withVegaLite && !embedHasVegaLite && loads.has(VEGA_EMBED);
    if (withVegaLite) embedHasVegaLite = true;
    loading.push(loadScript(VEGA_EMBED, again));
    return Promise.all(loading);
  }

  function needVegaLite(figures) {
    return Array.prototype.some.call(figures, function (figure) {
      return !isCompiled(figure);
    });
  }

  // Started while this file first runs, before Material announces the page: the fetches overlap the rest
  // of the page's start, the compiled charts' with the libraries'.
  (function loadEarly() {
    var figures = document.querySelectorAll(FIGURE);
    if (figures.length === 0) return;
    loadLibraries(needVegaLite(figures)).catch(function () {});
    // The variant a column as wide as the window would take: a guess, since the column's own width is
    // known only once the page is laid out, which reading it here would force before the page's scripts
    // have changed it (and so lay it out twice). A figure in a column narrower than the guess fetches its
    // own variant when it is drawn.
    var variant = compiledVariant(currentScheme(), layoutFor(window.innerWidth));
    var sets = new Set();
    figures.forEach(function (figure) {
      if (isCompiled(figure)) sets.add(figure.getAttribute(COMPILED_SET));
    });
    sets.forEach(function (set) {
      fetchCompiled(set, variant).catch(function () {});
      loadExpressions(set);
    });
  })();

  // Object URLs of the files offered for download, per figure; freed once instant navigation removed it.
  var offeredUrls = new Map();

  // The chart's rows: the dataset its template names them by, else the first rows written inline.
  function chartRows(spec) {
    if (spec.datasets && Array.isArray(spec.datasets[ROWS_DATASET])) return spec.datasets[ROWS_DATASET];
    var found = null;
    (function find(node) {
      if (found || !node || typeof node !== "object") return;
      if (node.data && Array.isArray(node.data.values)) {
        found = node.data.values;
        return;
      }
      Object.keys(node).forEach(function (key) {
        find(node[key]);
      });
    })(spec);
    return found || [];
  }

  // RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled.
  function csvField(value) {
    if (value === null || value === undefined) return "";
    var text = String(value);
    return /[",\r\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }

  function rowsCsv(rows) {
    var columns = [];
    rows.forEach(function (row) {
      Object.keys(row).forEach(function (key) {
        if (columns.indexOf(key) < 0) columns.push(key);
      });
    });
    var lines = [columns.map(csvField).join(",")];
    rows.forEach(function (row) {
      lines.push(columns.map(function (column) { return csvField(row[column]); }).join(","));
    });
    return lines.join("\n") + "\n";
  }

  // A machine's page writes no file beside its charts (a thousand machines' would be a third of the
  // site): the links charts/html.py leaves hidden download the rows and the spec the page already holds.
  function offerDownloads(figure) {
    var links = figure.querySelectorAll(OFFERED);
    var script = figure.querySelector(SPEC);
    if (links.length === 0 || !script || offeredUrls.has(figure)) return;
    var text = script.textContent;
    var urls = [];
    links.forEach(function (link) {
      var kind = link.getAttribute("data-offer");
      var blob =
        kind === "csv"
          ? new Blob([rowsCsv(chartRows(JSON.parse(text)))], { type: "text/csv" })
          : new Blob([text], { type: "application/json" });
      var url = URL.createObjectURL(blob);
      urls.push(url);
      link.href = url;
    });
    offeredUrls.set(figure, urls);
  }

  // The files are made when a link is about to be used (pointed at, focused, clicked, its menu opened),
  // not as the page starts: a dozen charts' rows written as CSV held up their drawing. A click's download
  // takes the address the link has once the click's listeners have run.
  var ABOUT_TO_USE = ["pointerenter", "focusin", "click", "contextmenu"];

  function showDownloads(figure) {
    var line = figure.querySelector(DOWNLOADS_LINE);
    if (!line || !line.hidden || figure.querySelectorAll(OFFERED).length === 0) return;
    ABOUT_TO_USE.forEach(function (type) {
      line.addEventListener(type, function () {
        offerDownloads(figure);
      }, true);
    });
    line.hidden = false;
  }

  function renderAll() {
    // Instant navigation removed the previous page's figures: free their views.
    live.forEach(function (figure) {
      if (!figure.isConnected) release(figure);
    });
    offeredUrls.forEach(function (urls, figure) {
      if (figure.isConnected) return;
      urls.forEach(function (url) {
        URL.revokeObjectURL(url);
      });
      offeredUrls.delete(figure);
    });
    observed.forEach(function (view) {
      if (!view.isConnected) {
        resizeObserver.unobserve(view);
        observed.delete(view);
      }
    });
    // Figures drawn already are left alone: the page is announced twice where Material's script ran after
    // the charts (see the end of this file), and a palette switch or a resize redraws on its own.
    var figures = Array.prototype.filter.call(document.querySelectorAll(FIGURE), function (figure) {
      return !requested.has(figure) && !queued.has(figure);
    });
    if (figures.length === 0) return;
    // Offered whether or not the chart libraries load: the spec and its rows are in the page either way.
    figures.forEach(showDownloads);
    loadLibraries(needVegaLite(figures))
      .then(
        function () {
          // Instant navigation may have replaced the page while the libraries loaded.
          if (figures[0].isConnected) return drawAll(figures);
        },
        function (err) {
          if (!missingLibraryReported) {
            missingLibraryReported = true;
            console.error("connlab: the chart libraries did not load; charts cannot render:", err);
          }
        }
      )
      .then(function () {
        document.dispatchEvent(new Event(CHARTS_DRAWN));
      });
  }

  // How far a figure is from the reader's view (0: in it), from its box as the page was first laid out; a
  // figure not shown (in a tab not chosen) is last.
  function distanceFromView(box) {
    if (box.width === 0 && box.height === 0) return Infinity;
    if (box.bottom < 0) return -box.bottom;
    return Math.max(0, box.top - window.innerHeight);
  }

  // The next frame (so that what was just drawn is painted), or a short wait where frames are not being
  // made (a tab in the background).
  function nextFrame() {
    return new Promise(function (resolve) {
      requestAnimationFrame(function () {
        setTimeout(resolve, 0);
      });
      setTimeout(resolve, 100);
    });
  }

  // Settles once every figure's first drawing is over (a failed one is marked by fail()). One figure at a
  // time, the nearest the reader's view first, each painted before the next starts: drawn all at once,
  // every chart's work was interleaved with the others' and the first appeared only when nearly all were
  // done (issue 54: the first chart within 3 s at a 4x CPU slowdown; scripts/bench/page_weight.py).
  function drawAll(figures) {
    // Read for every figure before any is drawn: a read after a chart was drawn lays the page out again.
    var sizes = new Map();
    var distances = new Map();
    figures.forEach(function (figure) {
      sizes.set(figure, measure(figure));
      distances.set(figure, distanceFromView(figure.getBoundingClientRect()));
      queued.add(figure);
    });
    var ordered = figures.slice().sort(function (a, b) {
      var first = distances.get(a), second = distances.get(b);
      return first === second ? 0 : first < second ? -1 : 1; // stable: the page's order where equally far
    });
    return ordered.reduce(function (previous, figure) {
      return previous.then(function () {
        queued.delete(figure);
        if (!figure.isConnected) return; // instant navigation took it away meanwhile
        var view = figure.querySelector(VIEW);
        if (resizeObserver && view && !observed.has(view)) {
          resizeObserver.observe(view);
          observed.add(view);
        }
        return renderFigure(figure, currentScheme(), undefined, sizes.get(figure)).then(nextFrame);
      });
    }, Promise.resolve());
  }

  // Re-render only charts drawn (or being drawn) for another scheme: Material re-sets
  // the palette attributes on load with the same value, which must not redraw
  // everything twice. Figures not yet requested are left to renderAll.
  function onSchemeChange() {
    var scheme = currentScheme();
    var figures = Array.prototype.filter.call(document.querySelectorAll(FIGURE), function (figure) {
      var previous = requested.get(figure);
      return previous !== undefined && previous !== scheme;
    });
    var sizes = figures.map(measure);
    figures.forEach(function (figure, index) {
      renderFigure(figure, scheme, undefined, sizes[index]);
    });
  }

  new MutationObserver(onSchemeChange).observe(document.body, {
    attributes: true,
    attributeFilter: ["data-md-color-scheme"],
  });

  // Material emits document$ once on load and after every instant navigation.
  function materialLoaded() {
    return typeof window.document$ !== "undefined" && typeof window.document$.subscribe === "function";
  }
  var following = false;
  function follow() {
    if (following || !materialLoaded()) return false;
    following = true;
    window.document$.subscribe(renderAll);
    return true;
  }
  // Material's script runs before this one (mkdocs.yml's extra_javascript come after it): its document$
  // announces each page, the first included; without Material the page is drawn once it is parsed.
  if (!follow()) {
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", function () {
        if (!follow()) renderAll();
      });
    } else {
      renderAll();
    }
  }
  // Opened as a file (build/site/index.html in a browser), the compiled charts and the search index cannot be
  // fetched: every page says so at its top, and how to serve the site instead (README: The site).
  var FILE_NOTICE = "connlab-file-notice";
  function noticeOpenedAsFile() {
    if (window.location.protocol !== "file:" || document.getElementById(FILE_NOTICE)) return;
    var notice = document.createElement("p");
    notice.id = FILE_NOTICE;
    notice.className = "admonition warning";
    notice.setAttribute("role", "note");
    notice.textContent =
      "This page was opened as a file: its charts and the search need the site served. " +
      "Run `make serve` in the repository and open http://127.0.0.1:8000/ instead.";
    var content = document.querySelector("article") || document.body;
    content.insertBefore(notice, content.firstChild);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", noticeOpenedAsFile);
  } else {
    noticeOpenedAsFile();
  }
})();
