/**
 * Tiny DOM helpers shared by every renderer.
 *
 * Untrusted strings only ever reach the DOM through `textContent` (the `text` option or string
 * children) or through the sanitizer in `markdown.js`; nothing here touches innerHTML.
 */

export const LOG_PREFIX = "[agentctx-widgets]";

/**
 * Build an element. `attrs` values that are null/undefined/false are skipped; `text` becomes the
 * element's textContent; string children become text nodes.
 * @param {string} tag
 * @param {Record<string, string | number | boolean | null | undefined>} [attrs]
 * @param {Array<Node | string | null | undefined | false>} [children]
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, children = []) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "text") el.textContent = String(value);
    else if (name === "className") el.className = String(value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return el;
}

/**
 * Pretty JSON for display; never throws (cycles and BigInts fall back to String()).
 * @param {unknown} value
 * @returns {string}
 */
export function prettyJson(value) {
  try {
    const text = JSON.stringify(value, null, 2);
    return text === undefined ? String(value) : text;
  } catch {
    return String(value);
  }
}

/**
 * Shorten a string for chips and summaries.
 * @param {string} text
 * @param {number} max
 */
export function clip(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Human-readable byte count ("1.5 KB").
 * @param {number} bytes
 */
export function formatBytes(bytes) {
  if (!Number.isFinite(bytes) || bytes < 0) return "? B";
  const units = ["B", "KB", "MB", "GB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** @param {...unknown} args */
export function warn(...args) {
  console.warn(LOG_PREFIX, ...args);
}

/**
 * Render a fallback box when a renderer throws, so one bad message never blanks the view.
 * @param {string} where
 * @param {unknown} error
 * @param {unknown} value
 */
export function renderFailure(where, error, value) {
  warn(`could not render ${where}:`, error);
  return h("div", { className: "actx-render-error", "data-kind": "render-error" }, [
    h("div", { text: `Could not render ${where}: ${error instanceof Error ? error.message : String(error)}` }),
    h("pre", { className: "actx-json", text: prettyJson(value) }),
  ]);
}
