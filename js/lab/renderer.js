// The mime renderer of a saved ContextView: the snapshot in the output at once, then the live widget
// in its place when the kernel holds the view's model (as the widget-view renderer would show it).
import { Panel, Widget } from "@lumino/widgets";
import { LOG_PREFIX } from "../src/render/dom.js";
import { WIDGET_VIEW_MIME } from "./mime.js";
import { SnapshotView, readSavedView } from "./snapshot.js";

/**
 * @typedef {import("@jupyterlab/rendermime").IMimeModel} IMimeModel
 * @typedef {import("@jupyterlab/rendermime").IRenderMimeRegistry} IRenderMimeRegistry
 * @typedef {{restoredStatus: boolean, restored: import("@lumino/signaling").ISignal<any, any>,
 *   get_model: (id: string) => Promise<unknown>}} WidgetManager the parts of ipywidgets' LabWidgetManager we use
 * @typedef {{rendermime: IRenderMimeRegistry, manager: () => Promise<WidgetManager>}} LiveHost
 *   a notebook panel: its rendermime and, once its kernel has one, its widget manager
 */

/**
 * @param {WidgetManager} manager
 * @returns {Promise<void>}
 */
export function whenRestored(manager) {
  if (manager.restoredStatus) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      manager.restored.disconnect(done);
      resolve();
    };
    manager.restored.connect(done);
  });
}

export class SavedViewRenderer extends Panel {
  /**
   * @param {{mimeType: string}} options
   * @param {LiveHost | null} host null where no widget manager can exist (a view drawn outside a notebook)
   */
  constructor(options, host) {
    super();
    this.mimeType = options.mimeType;
    this.host = host;
    this.addClass("agentctx-saved");
    this.snapshotWidget = new Widget();
    this.snapshot = new SnapshotView(this.snapshotWidget.node);
    this.addWidget(this.snapshotWidget);
    /** @type {string | null} the model id shown (snapshot or live) */
    this.modelId = null;
    /** @type {Widget | null} the widget-view renderer, once attached */
    this.live = null;
    /** @type {MutationObserver | null} */
    this.liveWatch = null;
    /** @type {IMimeModel | null} */
    this.latest = null;
    /** Bumped whenever an attach in flight must give up. */
    this.attempt = 0;
    this.setMode("snapshot");
  }

  /** @param {"snapshot" | "live" | "error"} mode */
  setMode(mode) {
    this.node.dataset.agentctxMode = mode;
  }

  /**
   * Called again with each update of the output (update_display): the same model id keeps a live
   * view untouched (it follows its model) and redraws a snapshot.
   * @param {IMimeModel} model
   * @returns {Promise<void>}
   */
  async renderModel(model) {
    this.latest = model;
    const saved = readSavedView(model.data[this.mimeType], model.data[WIDGET_VIEW_MIME]);
    if (saved instanceof Error) {
      this.detachLive();
      this.modelId = null;
      this.attempt += 1;
      this.snapshot.showError(saved);
      this.setMode("error");
      return;
    }
    const same = saved.modelId === this.modelId;
    if (same && this.live) return;
    this.snapshot.show(saved.state);
    if (same) return; // an attach for this id is in flight or found no model
    this.detachLive();
    this.modelId = saved.modelId;
    this.setMode("snapshot");
    void this.attach(saved.modelId, model);
  }

  /**
   * Swap the snapshot for the live widget if the kernel has the model (never for an untrusted output).
   * @param {string} modelId @param {IMimeModel} model
   */
  async attach(modelId, model) {
    const host = this.host;
    if (!host || !model.trusted || modelId === "") return;
    const attempt = ++this.attempt;
    const wanted = () => attempt === this.attempt && !this.isDisposed && !this.live;
    try {
      const manager = await host.manager();
      if (!wanted()) return;
      await whenRestored(manager);
      if (!wanted()) return;
      try {
        await manager.get_model(modelId);
      } catch {
        return; // not in this kernel (a reopened notebook, a restarted kernel): the snapshot stays
      }
      if (!wanted()) return;
      const live = host.rendermime.createRenderer(WIDGET_VIEW_MIME);
      this.live = live;
      this.addWidget(live);
      await /** @type {any} */ (live).renderModel(widgetViewModel(model, modelId));
      if (this.live !== live) return;
      if (live.isHidden) {
        this.detachLive(); // the widget-view renderer hides itself when the model is gone
        return;
      }
      this.snapshotWidget.hide();
      this.setMode("live");
      this.watchLive(live);
    } catch (error) {
      console.warn(LOG_PREFIX, "could not attach the live view; showing the saved one", error);
      this.detachLive();
    }
  }

  /**
   * The widget-view renderer hides itself when its view is disposed (the model closed, the kernel
   * restarted): show the snapshot again, from the newest output.
   * @param {Widget} live
   */
  watchLive(live) {
    this.liveWatch?.disconnect();
    this.liveWatch = new MutationObserver(() => {
      if (this.live === live && live.isHidden) {
        this.detachLive();
        if (this.latest) {
          const saved = readSavedView(this.latest.data[this.mimeType], this.latest.data[WIDGET_VIEW_MIME]);
          if (!(saved instanceof Error)) this.snapshot.show(saved.state);
        }
      }
    });
    this.liveWatch.observe(live.node, { attributes: true, attributeFilter: ["class"] });
  }

  detachLive() {
    this.liveWatch?.disconnect();
    this.liveWatch = null;
    const live = this.live;
    this.live = null;
    if (live && !live.isDisposed) live.dispose();
    if (this.snapshotWidget.isHidden) this.snapshotWidget.show();
    if (!this.isDisposed && this.node.dataset.agentctxMode === "live") this.setMode("snapshot");
  }

  dispose() {
    if (this.isDisposed) return;
    this.attempt += 1;
    this.detachLive();
    this.snapshot.destroy();
    super.dispose();
  }
}

/**
 * The output as the widget-view renderer reads it (a copy: that renderer blanks model_id on close).
 * @param {IMimeModel} model @param {string} modelId
 * @returns {IMimeModel}
 */
function widgetViewModel(model, modelId) {
  const given = model.data[WIDGET_VIEW_MIME];
  const data = given && typeof given === "object" ? { ...given } : { version_major: 2, version_minor: 1, model_id: modelId };
  return {
    trusted: model.trusted,
    data: { [WIDGET_VIEW_MIME]: data },
    metadata: {},
    setData() {},
  };
}
