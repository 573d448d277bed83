// Bundle the front end: src/index.js → agentctx_widgets/static/widget.js (ESM, every dependency
// inside, no CDN), src/styles.css → agentctx_widgets/static/widget.css, and src/loader.js →
// agentctx_widgets/static/loader.js (the small `_esm` each ContextView carries: it imports widget.js
// from the kernel's one shared bundle model, so a notebook stores the bundle once), and
// src/ts_transpile.js → agentctx_widgets/static/ts_transpile.js (TypeScript for Yao hooks, run in QuickJS).
// `node build.mjs --entry <file> --outdir <dir>` builds another entry alone (dev pages, screenshots).
import { build } from "esbuild";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
/** @param {string} name @param {string} fallback */
const arg = (name, fallback) => {
  const at = args.indexOf(name);
  return at === -1 ? fallback : path.resolve(args[at + 1]);
};
const custom = args.includes("--entry");
const entry = arg("--entry", path.join(here, "src/index.js"));
const outdir = arg("--outdir", path.join(here, "../agentctx_widgets/static"));
const minify = !args.includes("--no-minify");

if (!existsSync(entry)) {
  console.error(`[agentctx-widgets] build: entry ${entry} does not exist`);
  process.exit(1);
}

await build({
  entryPoints: custom ? { widget: entry } : { widget: entry, loader: path.join(here, "src/loader.js") },
  outdir,
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["es2022"],
  minify,
  sourcemap: false,
  legalComments: "eof",
  logLevel: "info",
});
if (!custom) {
  // The TypeScript transpiler for Yao hooks (src/ts_transpile.js), evaluated inside QuickJS, not a page:
  // an IIFE whose one binding, __agentctx_sucrase, the module loader (agentctx_widgets/yao/) reads.
  await build({
    entryPoints: { ts_transpile: path.join(here, "src/ts_transpile.js") },
    outdir,
    bundle: true,
    format: "iife",
    globalName: "__agentctx_sucrase",
    platform: "browser",
    target: ["es2022"],
    minify,
    sourcemap: false,
    legalComments: "eof",
    logLevel: "info",
  });
}
await build({
  entryPoints: { widget: path.join(here, "src/styles.css") },
  outdir,
  bundle: true,
  minify,
  logLevel: "info",
});
if (!custom) {
  // widget.js.gz / widget.css.gz: the FrontEndBundle's encoding done once here, not at every kernel's
  // first view (gzip -9 of the bundle cost a fresh kernel ~7 ms; agentctx_widgets/widget/bundle.py
  // uses a file only when it decodes to the text beside it).
  for (const name of ["widget.js", "widget.css"]) {
    const file = path.join(outdir, name);
    writeFileSync(`${file}.gz`, gzipSync(readFileSync(file), { level: 9 }));
  }
}
