// The prebuilt JupyterLab / Notebook 7 extension: a mime renderer that draws a ContextView's saved
// output with no kernel and hands over to the live widget when the kernel has it, and the widget's
// front end already in the page for the anywidget loader (docs/internals.md).
import { INotebookTracker } from "@jupyterlab/notebook";
import { IRenderMimeRegistry } from "@jupyterlab/rendermime";
import widget from "../src/index.js";
import { DIGEST, VERSION } from "./build-info.js";
import { VIEW_MIME, VIEW_RANK, WIDGET_VIEW_MIME } from "./mime.js";
import { SavedViewRenderer } from "./renderer.js";

/**
 * @typedef {import("./renderer.js").LiveHost} LiveHost
 * @typedef {import("./renderer.js").WidgetManager} WidgetManager
 * @typedef {import("@jupyterlab/notebook").NotebookPanel} NotebookPanel
 */

/** Where the page holds the front end for the widget loader (js/src/loader.js reads it). */
export const PREBUILT = Symbol.for("agentctx-widgets.prebuilt");

/** Put the anywidget module on the page: `{render, default, version, digest}` (CSS: the extension's style). */
export function exposePrebuilt() {
  /** @type {any} */ (globalThis)[PREBUILT] = Object.freeze({
    render: widget.render,
    default: widget,
    version: VERSION,
    digest: DIGEST,
  });
}

/**
 * A renderer factory for VIEW_MIME; safe: the renderer sanitizes what it draws as the widget does,
 * and an untrusted output gets the snapshot only.
 * @param {LiveHost | null} host
 */
export function savedViewFactory(host) {
  return {
    safe: true,
    mimeTypes: [VIEW_MIME],
    /** @param {{mimeType: string}} options */
    createRenderer: (options) => new SavedViewRenderer(options, host),
  };
}

/**
 * A notebook panel as the renderer sees it. The widget manager is not ours to create: ipywidgets'
 * extension binds its widget-view renderer to the manager once the panel's kernel is ready, so the
 * manager is read from a renderer that the same rendermime creates.
 */
export class PanelHost {
  /** @param {NotebookPanel} panel */
  constructor(panel) {
    this.panel = panel;
    this.rendermime = panel.content.rendermime;
    /** @type {Set<(manager: WidgetManager) => void>} */
    this.waiters = new Set();
    const session = panel.sessionContext;
    // ipywidgets registers its bound renderer a few promise steps after `ready`: look after them.
    const later = () => {
      if (this.waiters.size > 0) setTimeout(() => void this.check(), 0);
    };
    void session.ready.then(later, () => {});
    session.kernelChanged.connect(later);
    session.statusChanged.connect(later);
    panel.disposed.connect(() => {
      session.kernelChanged.disconnect(later);
      session.statusChanged.disconnect(later);
      this.waiters.clear();
    });
  }

  /**
   * The manager bound to the rendermime's widget-view renderer now, or null (none yet: no kernel).
   * @returns {Promise<WidgetManager | null>}
   */
  async probe() {
    if (!this.rendermime.getFactory(WIDGET_VIEW_MIME)) return null;
    const renderer = /** @type {any} */ (this.rendermime.createRenderer(WIDGET_VIEW_MIME));
    const delegate = renderer._manager;
    renderer.dispose();
    if (!delegate || typeof delegate.promise?.then !== "function") return null;
    // A resolved promise listed first wins the race; the placeholder renderer's never resolves.
    return Promise.race([delegate.promise, Promise.resolve(null)]);
  }

  async check() {
    if (this.waiters.size === 0) return;
    const manager = await this.probe();
    if (!manager) return;
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const resolve of waiters) resolve(manager);
  }

  /**
   * Resolves with the panel's widget manager once there is one (never, in a panel with no kernel).
   * @returns {Promise<WidgetManager>}
   */
  async manager() {
    const now = await this.probe();
    if (now) return now;
    return new Promise((resolve) => this.waiters.add(resolve));
  }
}

/** @param {NotebookPanel} panel */
function watchPanel(panel) {
  panel.content.rendermime.addFactory(savedViewFactory(new PanelHost(panel)), VIEW_RANK);
}

const plugin = {
  id: "agentctx-widgets:saved-view",
  description: "Draws saved ContextView outputs without a kernel and attaches them to the live widget.",
  autoStart: true,
  requires: [IRenderMimeRegistry],
  optional: [INotebookTracker],
  /**
   * @param {unknown} _app
   * @param {import("@jupyterlab/rendermime").IRenderMimeRegistry} rendermime
   * @param {import("@jupyterlab/notebook").INotebookTracker | null} tracker
   */
  activate(_app, rendermime, tracker) {
    exposePrebuilt();
    rendermime.addFactory(savedViewFactory(null), VIEW_RANK); // outside notebooks: the snapshot
    if (tracker) {
      tracker.forEach(watchPanel);
      tracker.widgetAdded.connect((_sender, panel) => watchPanel(panel));
    }
  },
};

export default plugin;
