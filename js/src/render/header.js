/**
 * The header: context name, message count, model, what the last turn and the context cost (`cost.js`;
 * nothing while unknown), and a usage gauge (`tokens` of `window`, with the percentage); no gauge when
 * the window is unknown (null).
 */
import { costText, costTitle } from "./cost.js";
import { h } from "./dom.js";

/** @typedef {{name?: string | null, count?: number | null, tokens?: number | null, window?: number | null, model?: string | null, rateLimits?: Record<string, string> | null, diagnostics?: Diagnostic[] | null, turnCost?: import("./cost.js").CostValue | null, contextCost?: import("./cost.js").CostValue | null}} Header */
/** @typedef {{code: string, message: string, where: string, hint: string}} Diagnostic */

/**
 * The provider's rate-limit headers (OpenAI `x-ratelimit-remaining-requests`, Anthropic
 * `anthropic-ratelimit-tokens-remaining`, …) as "requests 99/100 · tokens 39K/40K", plus `retry-after`.
 * @param {Record<string, string>} limits
 */
export function rateLimitSummary(limits) {
  /** @type {Record<string, {remaining?: string, limit?: string}>} */
  const kinds = {};
  for (const [name, value] of Object.entries(limits)) {
    const rest = name.toLowerCase().replace(/^(x-)?(anthropic-)?ratelimit-/, "");
    const parts = rest.split("-");
    const field = parts.includes("remaining") ? "remaining" : parts.includes("limit") ? "limit" : null;
    const kind = parts.includes("requests") ? "requests" : parts.join("-") === `${field}-tokens` || parts.join("-") === `tokens-${field}` ? "tokens" : null;
    if (field && kind) (kinds[kind] ??= {})[field] = value;
  }
  const shown = [];
  for (const kind of ["requests", "tokens"]) {
    const pair = kinds[kind];
    if (!pair || pair.remaining === undefined) continue;
    const number = (/** @type {string} */ text) => (/^\d+$/.test(text) ? Number(text).toLocaleString("en-US") : text);
    shown.push(`${kind} ${number(pair.remaining)}${pair.limit === undefined ? "" : `/${number(pair.limit)}`}`);
  }
  const retry = limits["retry-after"];
  if (retry !== undefined) shown.push(`retry after ${retry} s`);
  return shown.join(" · ");
}

/** @param {number} n */
function compact(n) {
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}K`;
  return n.toLocaleString("en-US");
}

/** @param {unknown} value */
const str = (value) => (typeof value === "string" ? value : "");

export class HeaderView {
  constructor() {
    this.name = h("span", { className: "actx-name", "data-testid": "actx-header-name" });
    this.count = h("span", { className: "actx-count", "data-testid": "actx-header-count" });
    this.model = h("span", { className: "actx-model", "data-testid": "actx-header-model" });
    this.limits = h("span", { className: "actx-rate-limits", "data-testid": "actx-rate-limits" });
    // what Yao accepts but a hook author almost surely did not mean: a badge that opens the list
    this.diagnosticsCount = h("summary", { className: "actx-diagnostics-badge" });
    this.diagnosticsList = h("ol", { className: "actx-diagnostics-list" });
    this.diagnostics = h("details", { className: "actx-diagnostics", "data-testid": "actx-diagnostics" },
      [this.diagnosticsCount, this.diagnosticsList]);
    this.turnCost = h("span", { className: "actx-cost-item", "data-testid": "actx-turn-cost" });
    this.contextCost = h("span", { className: "actx-cost-item", "data-testid": "actx-context-cost" });
    this.cost = h("span", { className: "actx-cost", "data-testid": "actx-cost" }, [this.turnCost, this.contextCost]);
    this.fill = h("span", { className: "actx-gauge-fill" });
    this.gaugeText = h("span", { className: "actx-gauge-text" });
    this.gauge = h("div", { className: "actx-gauge", "data-testid": "actx-gauge", role: "meter", "aria-valuemin": "0", "aria-valuemax": "100" }, [
      h("span", { className: "actx-gauge-bar" }, [this.fill]),
      this.gaugeText,
    ]);
    this.el = h("header", { className: "actx-header", "data-testid": "actx-header" }, [
      h("div", { className: "actx-title" }, [this.name, this.count, this.model]),
      this.diagnostics,
      this.limits,
      this.cost,
      this.gauge,
    ]);
  }

  /** @param {Diagnostic[]} items */
  updateDiagnostics(items) {
    this.diagnostics.hidden = items.length === 0;
    this.diagnosticsCount.textContent = `⚠ ${items.length} diagnostic${items.length === 1 ? "" : "s"}`;
    this.diagnosticsList.replaceChildren(...items.map((item) => h("li", { className: "actx-diagnostic", "data-code": str(item.code) }, [
      h("code", { className: "actx-diagnostic-code", text: str(item.code) }),
      h("span", { className: "actx-diagnostic-message", text: ` ${str(item.message)}` }),
      h("div", { className: "actx-diagnostic-where", text: str(item.where) }),
      h("div", { className: "actx-diagnostic-hint", text: str(item.hint) }),
    ])));
  }

  /**
   * One of the two costs: "turn $0.0035" with its tooltip, hidden when unknown.
   * @param {HTMLElement} el @param {string} label @param {unknown} value
   */
  static showCost(el, label, value) {
    const text = costText(value);
    el.hidden = text === null;
    el.textContent = text === null ? "" : `${label} ${text}`;
    el.title = text === null ? "" : costTitle(value);
    const cost = /** @type {{unpriced?: unknown[], estimated?: boolean}} */ (value ?? {});
    el.dataset.unpriced = Array.isArray(cost.unpriced) && cost.unpriced.length ? "1" : "0";
    el.dataset.estimated = cost.estimated === true ? "1" : "0";
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
    const limits = hd.rateLimits && typeof hd.rateLimits === "object" ? hd.rateLimits : {};
    this.limits.textContent = rateLimitSummary(limits);
    this.limits.title = Object.entries(limits).map(([name, value]) => `${name}: ${value}`).join("\n");
    this.limits.hidden = !this.limits.textContent;
    this.updateDiagnostics(Array.isArray(hd.diagnostics) ? hd.diagnostics : []);
    HeaderView.showCost(this.turnCost, "turn", hd.turnCost);
    HeaderView.showCost(this.contextCost, "context", hd.contextCost);
    this.cost.hidden = this.turnCost.hidden && this.contextCost.hidden;
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
