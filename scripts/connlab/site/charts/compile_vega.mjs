// Vega-Lite specs compiled to Vega exactly as vega-embed compiles them in the browser (connlab.site.charts.compiled):
// the same vega-lite, vega-themes and vega-util from node_modules/, the theme merged under the options' config
// as vega-embed's _embed merges them, then vegaLite.compile(spec, {config}).
//
// stdin: a JSON list of {"spec": <Vega-Lite>, "config": <object>, "theme": <name or null>}.
// stdout: a JSON list of Vega specs, one per job, in order.
import { readFileSync } from "node:fs";
import { compile } from "vega-lite";
import * as themes from "vega-themes";
import { mergeConfig } from "vega-util";

const jobs = JSON.parse(readFileSync(0, "utf8"));
// The browser logs vega-lite's warnings (a kind of chart with a discrete height drops "fit-y"); here they are
// the same and say nothing new. An error fails the compile.
const logger = {
  level() { return logger; },
  error(...args) { throw new Error(args.join(" ")); },
  warn() { return logger; },
  info() { return logger; },
  debug() { return logger; },
};
const specs = jobs.map(({ spec, config, theme }) => {
  const merged = theme ? mergeConfig(themes[theme], config ?? {}) : config;
  return compile(spec, { config: merged, logger }).spec;
});
process.stdout.write(JSON.stringify(specs));
