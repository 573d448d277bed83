"""The static rendering's CSS, scoped to one root class.

Every rule sits under ``.{ROOT_CLASS}``, a class named after a hash of the CSS itself: two renderings
from two versions of this package in one notebook each keep their own look, and nothing here touches
the page around it (or the live view's ``actx-`` classes). Colours follow JupyterLab's theme variables
(``--jp-*``, light and dark themes); where they are absent (a standalone page, GitHub, a mail preview)
the fallbacks follow ``prefers-color-scheme``.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["CSS", "ROOT_CLASS", "PAGE_CSS"]

_LIGHT = {
    "fg": "rgba(0, 0, 0, 0.87)", "fg2": "rgba(0, 0, 0, 0.62)", "fg3": "rgba(0, 0, 0, 0.5)",
    "bg": "#ffffff", "bg2": "#f3f3f3", "bg3": "#e0e0e0", "border": "#e0e0e0", "border2": "#bdbdbd",
    "brand": "#1565c0", "error": "#c62828", "error-bg": "#fdeded", "warn": "#e65100", "success": "#2e7d32",
    "code-bg": "#f6f6f6",
}
_DARK = {
    "fg": "rgba(255, 255, 255, 0.87)", "fg2": "rgba(255, 255, 255, 0.64)", "fg3": "rgba(255, 255, 255, 0.5)",
    "bg": "#111111", "bg2": "#1d1d1d", "bg3": "#333333", "border": "#3a3a3a", "border2": "#5a5a5a",
    "brand": "#64b5f6", "error": "#ef7070", "error-bg": "#3a1f1f", "warn": "#ffb74d", "success": "#81c784",
    "code-bg": "#1a1a1a",
}


def _fallbacks(selector: str, colours: dict[str, str], scheme: str) -> str:
    body = " ".join(f"--actxd-fb-{name}: {value};" for name, value in colours.items())
    return f"{selector} {{ {body} color-scheme: {scheme}; }}\n"


# The fallbacks (used where a --jp-* variable is missing) follow JupyterLab's own light/dark flag when
# the page has one (so a theme that defines only some variables stays coherent), else the OS setting.
_TEMPLATE = (
    _fallbacks(".R", _LIGHT, "light")
    + "@media (prefers-color-scheme: dark) {\n" + _fallbacks(".R", _DARK, "dark") + "}\n"
    + _fallbacks('[data-jp-theme-light="true"] .R', _LIGHT, "light")
    + _fallbacks('[data-jp-theme-light="false"] .R', _DARK, "dark")
    + """
.R {
  --actxd-fg: var(--jp-ui-font-color1, var(--actxd-fb-fg));
  --actxd-fg2: var(--jp-ui-font-color2, var(--actxd-fb-fg2));
  --actxd-fg3: var(--jp-ui-font-color3, var(--actxd-fb-fg3));
  --actxd-bg: var(--jp-layout-color1, var(--actxd-fb-bg));
  --actxd-bg2: var(--jp-layout-color2, var(--actxd-fb-bg2));
  --actxd-bg3: var(--jp-layout-color3, var(--actxd-fb-bg3));
  --actxd-border: var(--jp-border-color2, var(--actxd-fb-border));
  --actxd-border2: var(--jp-border-color1, var(--actxd-fb-border2));
  --actxd-brand: var(--jp-brand-color1, var(--actxd-fb-brand));
  --actxd-error: var(--jp-error-color1, var(--actxd-fb-error));
  --actxd-error-bg: var(--jp-rendermime-error-background, var(--actxd-fb-error-bg));
  --actxd-warn: var(--jp-warn-color1, var(--actxd-fb-warn));
  --actxd-success: var(--jp-success-color1, var(--actxd-fb-success));
  --actxd-code-bg: var(--jp-cell-editor-background, var(--actxd-fb-code-bg));
  --actxd-code-font: var(--jp-code-font-family, Menlo, Consolas, "DejaVu Sans Mono", monospace);
  --actxd-radius: 4px;
  box-sizing: border-box;
  max-width: 100%;
  margin: 0;
  color: var(--actxd-fg);
  background: var(--actxd-bg);
  border: 1px solid var(--actxd-border);
  border-radius: var(--actxd-radius);
  font-family: var(--jp-ui-font-family, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif);
  font-size: var(--jp-content-font-size1, 14px);
  line-height: 1.45;
  text-align: left;
}
.R *, .R *::before, .R *::after { box-sizing: border-box; }

.R .actxd-header {
  display: flex; flex-wrap: wrap; align-items: baseline; gap: 2px 12px;
  padding: 6px 10px;
  background: var(--actxd-bg2);
  border-bottom: 1px solid var(--actxd-border);
  border-radius: var(--actxd-radius) var(--actxd-radius) 0 0;
}
.R .actxd-name { font-weight: 600; overflow-wrap: anywhere; }
.R .actxd-sep { display: none; } /* the gap separates them here; the dot reads where styles are stripped */
.R :is(.actxd-role, .actxd-section-title) b { font-weight: inherit; }
.R .actxd-count, .R .actxd-usage { color: var(--actxd-fg2); font-size: 0.86em; }
.R .actxd-header .actxd-usage { margin-left: auto; }
.R .actxd-cost { white-space: nowrap; cursor: help; text-decoration: underline dotted; text-underline-offset: 2px; }
.R .actxd-cost[data-unpriced="1"] { font-style: italic; }
.R .actxd-body { padding: 8px 10px; }
.R .actxd-earlier {
  margin: 0 0 8px; padding: 2px 8px; font-size: 0.86em; color: var(--actxd-fg2);
  border: 1px dashed var(--actxd-border); border-radius: var(--actxd-radius);
}
.R .actxd-empty { color: var(--actxd-fg3); font-style: italic; }

/* Context messages */
.R .actxd-msg {
  margin: 0 0 8px;
  padding: 4px 10px 6px;
  border-left: 3px solid var(--actxd-border2);
  border-radius: 0 var(--actxd-radius) var(--actxd-radius) 0;
  background: var(--actxd-bg);
  min-width: 0;
}
/* Entries come in chunks of 50; full chunks after the first are skipped (style, layout, paint) while they
   are off screen: a 10,000-message page opens about as fast as it parses (find-in-page and printing still
   see it all). A short document (a turn's) has no skipped chunk, so no placeholder box ever shows. */
.R .actxd-chunk { display: flow-root; }
.R .actxd-lazy { content-visibility: auto; contain-intrinsic-size: auto 3000px; }
.R .actxd-msg-system { border-left-color: var(--actxd-warn); background: var(--actxd-bg2); }
.R .actxd-msg-user { border-left-color: var(--actxd-brand); background: var(--actxd-bg2); }
.R .actxd-msg-assistant { border-left-color: var(--actxd-success); }
.R .actxd-msg-failed { border-left-color: var(--actxd-error); }
.R .actxd-role {
  font-size: 0.75em; font-weight: 600; letter-spacing: 0.04em; text-transform: uppercase;
  color: var(--actxd-fg3); margin-bottom: 2px;
}
.R .actxd-msg-body > * + * { margin-top: 6px; }
.R .actxd-record {
  margin: 0 0 8px; padding: 2px 10px; font-size: 0.86em; color: var(--actxd-fg2);
}
.R .actxd-record > summary { cursor: pointer; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.R .actxd-record-line { font-family: var(--actxd-code-font); font-size: 0.92em; color: var(--actxd-fg3); }
.R .actxd-meta > summary { cursor: pointer; font-size: 0.75em; color: var(--actxd-fg3); }

/* Markdown */
.R .actxd-md { overflow-wrap: break-word; min-width: 0; }
.R .actxd-md > :first-child { margin-top: 0; }
.R .actxd-md > :last-child { margin-bottom: 0; }
.R .actxd-md :is(p, ul, ol, pre, table, blockquote, h1, h2, h3, h4, h5, h6, hr, dl, details) { margin: 0.5em 0; }
.R .actxd-md :is(h1, h2, h3, h4, h5, h6) { line-height: 1.25; font-weight: 600; }
.R .actxd-md h1 { font-size: 1.4em; }
.R .actxd-md h2 { font-size: 1.25em; }
.R .actxd-md h3 { font-size: 1.1em; }
.R .actxd-md :is(h4, h5, h6) { font-size: 1em; }
.R .actxd-md :is(ul, ol) { padding-left: 1.6em; }
.R .actxd-md li + li { margin-top: 0.15em; }
.R a { color: var(--actxd-brand); }
.R .actxd-md code {
  font-family: var(--actxd-code-font); font-size: 0.92em;
  padding: 0.05em 0.3em; border-radius: 3px; background: var(--actxd-code-bg);
}
.R .actxd-md pre {
  white-space: pre; word-break: normal; overflow-x: auto;
  padding: 6px 8px; border-radius: var(--actxd-radius);
  background: var(--actxd-code-bg); border: 1px solid var(--actxd-border); color: var(--actxd-fg);
}
.R .actxd-md pre code { padding: 0; background: none; font-size: var(--jp-code-font-size, 13px); }
.R .actxd-md blockquote {
  margin-left: 0; padding-left: 10px; border-left: 3px solid var(--actxd-border2); color: var(--actxd-fg2);
}
.R .actxd-md table { display: block; max-width: 100%; overflow-x: auto; border-collapse: collapse; }
.R .actxd-md :is(th, td) { border: 1px solid var(--actxd-border); padding: 3px 8px; text-align: left; }
.R .actxd-md th { background: var(--actxd-bg2); }
.R .actxd-md hr { border: 0; border-top: 1px solid var(--actxd-border); }
.R .actxd-img { display: block; max-width: 100%; height: auto; border-radius: var(--actxd-radius); }
.R .actxd-img-link {
  display: inline-block; padding: 1px 8px; font-size: 0.9em; max-width: 100%; overflow-wrap: anywhere;
  border: 1px dashed var(--actxd-brand); border-radius: var(--actxd-radius); text-decoration: none;
}
.R .actxd-img-missing { color: var(--actxd-fg3); font-size: 0.9em; }

/* Thinking */
.R .actxd-thinking { color: var(--actxd-fg2); }
.R .actxd-thinking > summary { cursor: pointer; font-style: italic; font-size: 0.9em; }
.R .actxd-thinking > .actxd-md {
  margin-top: 4px; padding-left: 10px; border-left: 2px dotted var(--actxd-border2); font-size: 0.95em;
}

/* Tool calls and results */
.R :is(.actxd-tool, .actxd-block-toolCall) {
  padding: 4px 8px 6px;
  border: 1px solid var(--actxd-border);
  border-radius: var(--actxd-radius);
  background: var(--actxd-bg2);
}
.R .actxd-tool-call > summary { cursor: pointer; }
.R .actxd-tool-head { display: inline-flex; flex-wrap: wrap; align-items: baseline; gap: 2px 8px; }
.R .actxd-tool-kind {
  font-size: 0.7em; font-weight: 600; letter-spacing: 0.04em; text-transform: uppercase;
  padding: 0 5px; border-radius: 3px; color: var(--actxd-bg); background: var(--actxd-fg2);
}
.R .actxd-tool-name { font-weight: 600; font-family: var(--actxd-code-font); overflow-wrap: anywhere; }
.R .actxd-call-id { font-family: var(--actxd-code-font); font-size: 0.8em; color: var(--actxd-fg3); overflow-wrap: anywhere; }
.R :is(.actxd-args, .actxd-json, .actxd-tool-output, .actxd-pre, .actxd-error-details) {
  margin: 4px 0 0; padding: 4px 8px;
  max-height: 32em; overflow: auto;
  font-family: var(--actxd-code-font); font-size: var(--jp-code-font-size, 12.5px);
  white-space: pre-wrap; overflow-wrap: anywhere; word-break: normal;
  border-radius: 3px; background: var(--actxd-code-bg); color: var(--actxd-fg);
}
.R .actxd-args-raw { border-left: 2px solid var(--actxd-warn); }
.R .actxd-tool-result { margin-top: 6px; padding-top: 4px; border-top: 1px dashed var(--actxd-border2); }
.R .actxd-msg-tool .actxd-tool-result { margin-top: 0; padding-top: 0; border-top: 0; }
.R .actxd-tool-result-head { font-size: 0.8em; color: var(--actxd-fg2); }
.R .actxd-tool-failed .actxd-tool-result-head { color: var(--actxd-error); font-weight: 600; }
.R .actxd-tool-failed .actxd-tool-output { border-left: 2px solid var(--actxd-error); }
.R .actxd-tool-result > * + * { margin-top: 4px; }

/* Errors */
.R .actxd-error {
  padding: 6px 10px;
  border-left: 3px solid var(--actxd-error);
  border-radius: 0 var(--actxd-radius) var(--actxd-radius) 0;
  background: var(--actxd-error-bg);
  color: var(--actxd-fg);
}
.R .actxd-error-title { font-weight: 600; color: var(--actxd-error); }
.R .actxd-error-code {
  display: inline-block; margin-right: 8px; padding: 0 6px; border-radius: 3px;
  font-family: var(--actxd-code-font); font-size: 0.85em; color: var(--actxd-bg); background: var(--actxd-error);
}
.R .actxd-retry { margin-top: 2px; font-size: 0.86em; color: var(--actxd-fg2); }

/* Chips, files, media */
.R .actxd-chip {
  display: inline-flex; align-items: baseline; gap: 6px; max-width: 100%;
  padding: 1px 8px; border: 1px solid var(--actxd-border2); border-radius: 10px;
  background: var(--actxd-bg); font-size: 0.8em; color: var(--actxd-fg2);
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis; vertical-align: middle;
}
.R .actxd-chip-kind { font-weight: 600; text-transform: uppercase; letter-spacing: 0.04em; color: var(--actxd-brand); }
.R .actxd-chip-text { overflow: hidden; text-overflow: ellipsis; }
.R .actxd-file-name { font-weight: 600; color: var(--actxd-fg); }
.R .actxd-figure { margin: 0; }
.R .actxd-figure figcaption, .R .actxd-media-facts { font-size: 0.8em; color: var(--actxd-fg2); }
.R .actxd-media-link { font-weight: 600; overflow-wrap: anywhere; }
.R .actxd-blocked-url { font-size: 0.86em; color: var(--actxd-fg2); overflow-wrap: anywhere; }
.R .actxd-blocked-url code { font-family: var(--actxd-code-font); }

/* Output messages */
.R .actxd-outputs { margin: 0 10px; padding: 6px 0 8px; border-top: 1px solid var(--actxd-border); }
.R :is(.actxd-section-title, .actxd-group-title, .actxd-label) {
  font-size: 0.75em; font-weight: 600; letter-spacing: 0.04em; text-transform: uppercase; color: var(--actxd-fg3);
}
.R .actxd-label { margin-right: 6px; }
.R .actxd-out { margin: 6px 0; min-width: 0; }
.R .actxd-repeat > summary { cursor: pointer; font-size: 0.86em; color: var(--actxd-fg2); }
.R .actxd-repeat[open] > summary { margin-bottom: 4px; }
.R :is(.actxd-out-action, .actxd-out-event) { display: inline-block; margin: 2px 6px 2px 0; max-width: 100%; }
.R .actxd-group { margin: 8px 0; padding: 4px 10px; border: 1px solid var(--actxd-border); border-radius: var(--actxd-radius); }
.R .actxd-user-input { padding: 4px 10px; border-left: 3px solid var(--actxd-brand); background: var(--actxd-bg2); }
.R .actxd-plain { white-space: pre-wrap; overflow-wrap: anywhere; }
.R .actxd-loading { color: var(--actxd-fg2); font-style: italic; }
.R .actxd-generic { padding: 4px 8px; border: 1px dashed var(--actxd-border); border-radius: var(--actxd-radius); }
.R .actxd-footer {
  padding: 4px 10px; font-size: 0.86em; color: var(--actxd-fg2);
  border-top: 1px solid var(--actxd-border); background: var(--actxd-bg2);
  border-radius: 0 0 var(--actxd-radius) var(--actxd-radius);
}
/* Yao blocks, durations and the execute family (as the live view's styles.css) */
.R .actxd-block-title { display: flex; flex-wrap: wrap; align-items: baseline; gap: 2px 8px; }
.R .actxd-block-name { text-transform: none; letter-spacing: normal; color: var(--actxd-fg2); }
.R :is(.actxd-block-type, .actxd-block-status) { font-weight: 400; color: var(--actxd-fg3); }
.R .actxd-block-status { color: var(--actxd-warn); }
.R .actxd-duration {
  display: inline-block; padding: 0 6px; border: 1px solid var(--actxd-border); border-radius: 8px;
  font-family: var(--actxd-code-font); font-size: 0.72rem; font-weight: 400; letter-spacing: normal;
  text-transform: none; color: var(--actxd-fg3); background: var(--actxd-bg);
}
.R .actxd-exec { font-size: 0.9em; color: var(--actxd-fg2); }
.R .actxd-exec-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 2px 6px; line-height: 1.3; }
.R summary.actxd-exec-head { cursor: pointer; list-style: none; }
.R summary.actxd-exec-head::-webkit-details-marker { display: none; }
.R summary.actxd-exec-head::after { content: "›"; color: var(--actxd-fg3); }
.R .actxd-exec > details[open] > summary.actxd-exec-head::after { transform: rotate(90deg); }
.R .actxd-exec-icon { flex: none; width: 1em; text-align: center; font-size: 0.85em; }
.R .actxd-exec-running { color: var(--actxd-brand); }
.R .actxd-exec-completed { color: var(--actxd-success); }
.R .actxd-exec-error { color: var(--actxd-error); }
.R .actxd-exec-label { min-width: 0; font-family: var(--actxd-code-font); color: var(--actxd-fg); overflow-wrap: anywhere; }
.R :is(.actxd-exec-status, .actxd-exec-fact) { font-size: 0.85em; color: var(--actxd-fg3); }
.R .actxd-exec[data-status="error"] .actxd-exec-status { color: var(--actxd-error); }
.R .actxd-exec-detail {
  margin: 4px 0 0 1.2em; padding: 4px 8px; max-height: 200px; overflow: auto;
  border-left: 2px solid var(--actxd-border2); border-radius: 0 var(--actxd-radius) var(--actxd-radius) 0;
  background: var(--actxd-code-bg); font-family: var(--actxd-code-font); font-size: 0.85em;
  white-space: pre-wrap; overflow-wrap: anywhere; color: var(--actxd-fg2);
}
.R :is(.actxd-exec-todos, .actxd-exec-questions) { margin: 4px 0 0 1.2em; padding: 0; list-style: none; }
.R .actxd-exec-todo[data-status="completed"] > span:nth-child(2) { text-decoration: line-through; color: var(--actxd-fg3); }
.R .actxd-exec-check { margin-right: 6px; }
.R :is(.actxd-exec-badge, .actxd-exec-option) { padding: 0 6px; border: 1px solid var(--actxd-border2); border-radius: 8px; font-size: 0.85em; }
.R .actxd-exec-badge { margin-left: 6px; }
.R .actxd-exec-options { display: flex; flex-wrap: wrap; gap: 4px; margin-top: 2px; }
.R details > summary::marker { color: var(--actxd-fg3); }
@media print {
  .R :is(.actxd-args, .actxd-json, .actxd-tool-output, .actxd-pre, .actxd-error-details, .actxd-exec-detail) { max-height: none; }
}
""")

ROOT_CLASS = "actx-doc-" + hashlib.sha256(_TEMPLATE.encode()).hexdigest()[:10]
"""The root class every rule is scoped to (the rendered root also carries ``actx-doc``)."""

CSS = " ".join(line.strip() for line in re.sub(r"/\*.*?\*/", "", _TEMPLATE, flags=re.S)
               .replace(".R", "." + ROOT_CLASS).splitlines() if line.strip())
"""The stylesheet, one line (comments dropped)."""

PAGE_CSS = ":root { color-scheme: light dark; } body { margin: 0; padding: 16px; background: Canvas; color: CanvasText; }"
"""The page around a standalone export."""
