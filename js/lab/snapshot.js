// A saved ContextView drawn from its output alone: the VIEW_MIME data checked, then handed to the
// widget's own renderer (src/render/), so a reopened notebook looks exactly like the live view did.
import { LOG_PREFIX } from "../src/render/dom.js";
import { createRenderer } from "../src/render/index.js";
import { VIEW_FORMAT } from "./mime.js";

/**
 * @typedef {import("../src/render/index.js").ViewState} ViewState
 * @typedef {{modelId: string, state: ViewState}} SavedView
 */

/**
 * The saved view in a VIEW_MIME payload `{version, state}`, or an Error saying what is wrong with it
 * (never thrown: a bad output shows its reason where the view would be). The model id is the one of
 * the widget-view data beside it (the payload carries none, so nbval can compare it: model ids are random).
 * @param {unknown} data
 * @param {unknown} [widgetView] the same output's widget-view data, `{model_id, ...}`
 * @returns {SavedView | Error}
 */
export function readSavedView(data, widgetView) {
  if (!data || typeof data !== "object" || Array.isArray(data)) {
    return new Error(`the saved view is ${describe(data)}, not an object`);
  }
  const record = /** @type {Record<string, unknown>} */ (data);
  if (record.version !== VIEW_FORMAT) {
    return new Error(`the saved view's version is ${describe(record.version)}; this front end reads version ${VIEW_FORMAT}`);
  }
  const modelId = /** @type {any} */ (widgetView)?.model_id ?? "";
  if (typeof modelId !== "string") {
    return new Error(`the view's model_id is ${describe(modelId)}, not a string`);
  }
  const state = record.state;
  if (!state || typeof state !== "object" || typeof (/** @type {any} */ (state).seq) !== "number") {
    return new Error(`the saved view's state is ${describe(state)}, not a view state with a numeric seq`);
  }
  return { modelId, state: /** @type {ViewState} */ (state) };
}

/** @param {unknown} value */
function describe(value) {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : JSON.stringify(value).slice(0, 40);
}

/**
 * Draws saved states into one element; `show(state)` redraws the whole view (a saved state is a
 * snapshot, never a delta).
 */
export class SnapshotView {
  /** @param {HTMLElement} el */
  constructor(el) {
    this.el = el;
    el.classList.add("agentctx-saved-view");
    /** @type {ReturnType<typeof createRenderer> | null} */
    this.renderer = null;
  }

  /** @param {ViewState} state */
  show(state) {
    this.clearError();
    if (!this.renderer) this.renderer = createRenderer(this.el);
    this.renderer.update(state);
    this.el.dataset.seq = String(state.seq);
  }

  /** @param {Error} error */
  showError(error) {
    this.destroyRenderer();
    console.warn(LOG_PREFIX, error.message);
    this.el.textContent = `${LOG_PREFIX} cannot show this saved view: ${error.message}.`;
    this.el.dataset.error = "true";
  }

  clearError() {
    if (this.el.dataset.error) {
      this.el.textContent = "";
      delete this.el.dataset.error;
    }
  }

  destroyRenderer() {
    try {
      this.renderer?.destroy();
    } catch (error) {
      console.warn(LOG_PREFIX, "cleanup failed", error);
    }
    this.renderer = null;
  }

  destroy() {
    this.destroyRenderer();
    this.el.textContent = "";
  }
}
