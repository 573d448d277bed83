/**
 * The header: context name, message count, model, and a usage gauge (`tokens` of `window`, with
 * the percentage); no gauge when the window is unknown (null).
 */
import { h } from "./dom.js";

/** @typedef {{name?: string | null, count?: number | null, tokens?: number | null, window?: number | null, model?: string | null}} Header */

/** @param {number} n */
function compact(n) {
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}K`;
  return n.toLocaleString("en-US");
}

export class HeaderView {
  constructor() {
    this.name = h("span", { className: "actx-name", "data-testid": "actx-header-name" });
    this.count = h("span", { className: "actx-count", "data-testid": "actx-header-count" });
    this.model = h("span", { className: "actx-model", "data-testid": "actx-header-model" });
    this.fill = h("span", { className: "actx-gauge-fill" });
    this.gaugeText = h("span", { className: "actx-gauge-text" });
    this.gauge = h("div", { className: "actx-gauge", "data-testid": "actx-gauge", role: "meter", "aria-valuemin": "0", "aria-valuemax": "100" }, [
      h("span", { className: "actx-gauge-bar" }, [this.fill]),
      this.gaugeText,
    ]);
    this.el = h("header", { className: "actx-header", "data-testid": "actx-header" }, [
      h("div", { className: "actx-title" }, [this.name, this.count, this.model]),
      this.gauge,
    ]);
  }

  /**
   * @param {Header | null | undefined} header
   * @param {number} contextLength fallback count when the header has none
   */
  update(header, contextLength) {
    const hd = header ?? {};
    this.name.textContent = typeof hd.name === "string" && hd.name ? hd.name : "Context";
    const count = typeof hd.count === "number" ? hd.count : contextLength;
    this.count.textContent = `${count.toLocaleString("en-US")} message${count === 1 ? "" : "s"}`;
    this.model.textContent = typeof hd.model === "string" ? hd.model : "";
    this.model.hidden = !this.model.textContent;
    const tokens = typeof hd.tokens === "number" && Number.isFinite(hd.tokens) ? Math.max(0, hd.tokens) : null;
    const window = typeof hd.window === "number" && hd.window > 0 ? hd.window : null;
    this.gauge.hidden = window === null;
    if (window === null) {
      this.gauge.removeAttribute("data-percent");
      return;
    }
    const used = tokens ?? 0;
    const percent = (used / window) * 100;
    const shown = percent > 0 && percent < 1 ? "<1" : String(Math.round(percent));
    this.fill.style.width = `${Math.min(100, percent)}%`;
    this.gauge.dataset.percent = String(Math.round(percent));
    this.gauge.dataset.level = percent >= 90 ? "high" : percent >= 70 ? "mid" : "low";
    this.gauge.setAttribute("aria-valuenow", String(Math.min(100, Math.round(percent))));
    this.gaugeText.textContent = tokens === null
      ? `? / ${compact(window)} tokens`
      : `${compact(used)} / ${compact(window)} tokens · ${shown}%`;
    this.gauge.title = `${used.toLocaleString("en-US")} of ${window.toLocaleString("en-US")} tokens`;
  }
}
