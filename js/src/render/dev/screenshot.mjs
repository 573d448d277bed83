// Build the dev entry, write light/dark sample pages, and screenshot them with headless Chromium
// at 900 and 400 px: `node src/render/dev/screenshot.mjs [outdir]` (default /tmp/actx-shots).
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const jsDir = path.resolve(here, "../../..");
const out = path.resolve(process.argv[2] ?? "/tmp/actx-shots");
mkdirSync(out, { recursive: true });
execFileSync("node", ["build.mjs", "--entry", path.join(here, "dev-entry.js"), "--outdir", out, "--no-minify"], { cwd: jsDir, stdio: "inherit" });

// A subset of JupyterLab 4's theme variables, light and dark.
const THEMES = {
  light: `--jp-ui-font-color1: rgba(0,0,0,.87); --jp-ui-font-color2: rgba(0,0,0,.54); --jp-ui-font-color3: rgba(0,0,0,.38);
    --jp-layout-color0: #fff; --jp-layout-color1: #fff; --jp-layout-color2: #eee; --jp-layout-color3: #bdbdbd;
    --jp-border-color1: #bdbdbd; --jp-border-color2: #e0e0e0; --jp-brand-color1: #1976d2; --jp-error-color1: #d32f2f;
    --jp-warn-color1: #f57c00; --jp-success-color1: #388e3c; --jp-cell-editor-background: #f5f5f5;
    --jp-rendermime-error-background: #fdd; --jp-code-font-family: "DejaVu Sans Mono", monospace;`,
  dark: `--jp-ui-font-color1: rgba(255,255,255,.87); --jp-ui-font-color2: rgba(255,255,255,.54); --jp-ui-font-color3: rgba(255,255,255,.38);
    --jp-layout-color0: #111; --jp-layout-color1: #212121; --jp-layout-color2: #424242; --jp-layout-color3: #616161;
    --jp-border-color1: #616161; --jp-border-color2: #424242; --jp-brand-color1: #42a5f5; --jp-error-color1: #f44336;
    --jp-warn-color1: #ffb74d; --jp-success-color1: #66bb6a; --jp-cell-editor-background: #2a2a2a;
    --jp-rendermime-error-background: rgba(244,67,54,.28); --jp-code-font-family: "DejaVu Sans Mono", monospace;`,
};

for (const [theme, vars] of Object.entries(THEMES)) {
  const page = path.join(out, `${theme}.html`);
  writeFileSync(page, `<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="widget.css">
<style>:root { ${vars} } body { margin: 12px; background: var(--jp-layout-color0); color: var(--jp-ui-font-color1); }
.actx-body { max-height: none !important; }
/* JupyterLab's output-area reset, which our styles must win against */
.jp-OutputArea-output pre { border: none; margin: 0; padding: 0; overflow-x: auto; overflow-y: auto;
  word-break: break-all; word-wrap: break-word; white-space: pre-wrap; }</style></head>
<body data-jp-theme-light="${theme === "light"}"><div class="jp-OutputArea-output" id="app"></div><script type="module" src="widget.js"></script></body></html>`);
  for (const width of [900, 400]) {
    const png = path.join(out, `${theme}-${width}.png`);
    execFileSync("/usr/bin/chromium", [
      "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--allow-file-access-from-files",
      "--virtual-time-budget=2000", `--screenshot=${png}`, `--window-size=${width},2600`, `file://${page}`,
    ], { stdio: "ignore", timeout: 60_000 });
    console.log(png);
  }
}
