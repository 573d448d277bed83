// The `_esm` every ContextView carries instead of the whole front end (static/loader.js).
//
// anywidget stores a widget's `_esm` and `_css` in each model's state, so a notebook with ten views
// stored the bundle ten times. The kernel keeps one FrontEndBundle model (code and CSS, gzipped and
// base64-encoded: a third of the text's size in the notebook; a digest) and each view refers to it in
// its `_bundle` trait; this loader follows that reference, decodes and imports the bundle once per
// page (cached by digest on globalThis: every view's loader is a module of its own), injects the CSS
// once, and hands the view to the bundle's `render`. Where the prebuilt JupyterLab extension already
// put the same build in the page (globalThis[Symbol.for("agentctx-widgets.prebuilt")], same digest),
// that copy is used and nothing is decoded.
//
// Why `initialize` too: custom messages sent before a view renders are lost (DESIGN.md "Kernel ↔ front
// end"), and a view displayed in the cell that streams renders after the first batches, while the
// kernel, busy running that cell, cannot answer the view's `sync` until the cell ends. anywidget calls
// `initialize` when the model is created and holds the model's comm messages until it returns, so
// listening there sees every batch sent after the model's state. An EarlyFeed keeps them (bounded) and
// each view starts from the synced `_snapshot` plus those batches, asking the kernel for nothing.
import { isKernelMessage, peekSeq } from "./protocol.js";
import { LOG_PREFIX } from "./render/dom.js";

export const REF_PREFIX = "IPY_MODEL_";
const MODULES = Symbol.for("agentctx-widgets.bundle-modules");
/** Where the prebuilt JupyterLab extension puts its copy of the front end (js/lab/plugin.js). */
export const PREBUILT = Symbol.for("agentctx-widgets.prebuilt");
const INLINE_HINT =
  "set AGENTCTX_WIDGETS_INLINE_BUNDLE=1 in the kernel before creating views to carry the bundle in each view";

/**
 * Imports in flight or done, by bundle digest, shared by every loader on the page.
 * @returns {Map<string, Promise<any>>}
 */
function moduleCache() {
  const scope = /** @type {any} */ (globalThis);
  if (!(scope[MODULES] instanceof Map)) scope[MODULES] = new Map();
  return scope[MODULES];
}

/**
 * The FrontEndBundle model a view's `_bundle` trait refers to.
 * @param {any} model the view's model (anywidget's proxy)
 * @returns {Promise<any>}
 */
export async function resolveBundleModel(model) {
  const ref = model.get("_bundle");
  if (ref && typeof ref === "object" && typeof ref.get === "function") return ref; // already deserialized
  if (typeof ref !== "string" || !ref.startsWith(REF_PREFIX)) {
    throw new Error(`_bundle is ${JSON.stringify(ref)}, not a widget reference (${REF_PREFIX}…)`);
  }
  const manager = model.widget_manager;
  if (!manager || typeof manager.get_model !== "function") {
    throw new Error("this front end offers no widget_manager.get_model");
  }
  const id = ref.slice(REF_PREFIX.length);
  const bundle = await manager.get_model(id);
  if (!bundle) throw new Error(`no widget model ${id} (the FrontEndBundle) on this page`);
  return bundle;
}

/**
 * Decode, inject the CSS of and import the bundle once per page; resolves to the module.
 * @param {any} bundle the FrontEndBundle model
 * @param {Document} [doc]
 * @param {(code: string) => Promise<any>} [importer] how code becomes a module (tests pass their own)
 * @returns {Promise<any>}
 */
export function importBundle(bundle, doc = document, importer = importText) {
  const digest = bundle.get("digest");
  const esm = bundle.get("esm");
  if (typeof digest !== "string" || !/^[0-9a-f]{16,64}$/.test(digest)) {
    return Promise.reject(new Error(`the FrontEndBundle's digest is ${JSON.stringify(digest)}, not hex`));
  }
  if (typeof esm !== "string" || esm === "") {
    return Promise.reject(new Error(`the FrontEndBundle ${digest} holds no code`));
  }
  const cache = moduleCache();
  let loading = cache.get(digest);
  if (!loading) {
    const encoding = bundle.get("encoding");
    const css = bundle.get("css");
    loading = (async () => {
      injectCss(doc, digest, typeof css === "string" ? await decode(css, encoding) : "");
      return importer(await decode(esm, encoding));
    })();
    cache.set(digest, loading);
    loading.catch(() => cache.delete(digest)); // a failed load may be retried by the next view
  }
  return loading;
}

/**
 * The text of a FrontEndBundle field: `gzip+base64` (what the kernel sends) or plain text.
 * @param {string} text @param {unknown} encoding
 * @returns {Promise<string>}
 */
export async function decode(text, encoding) {
  if (encoding === "" || encoding === undefined || text === "") return text;
  if (encoding !== "gzip+base64") throw new Error(`unknown FrontEndBundle encoding ${JSON.stringify(encoding)}`);
  if (typeof DecompressionStream !== "function") throw new Error("this browser has no DecompressionStream");
  const bytes = Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  const body = /** @type {ReadableStream<any>} */ (new Response(bytes).body);
  return new Response(body.pipeThrough(new DecompressionStream("gzip"))).text();
}

/** @param {Document} doc @param {string} digest @param {string} css */
function injectCss(doc, digest, css) {
  if (css === "" || doc.head.querySelector(`style[data-agentctx-bundle="${digest}"]`)) return;
  const style = doc.createElement("style");
  style.dataset.agentctxBundle = digest;
  style.textContent = css;
  doc.head.appendChild(style);
}

/** @param {string} code */
async function importText(code) {
  const url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
  try {
    return await import(/* @vite-ignore */ url);
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** @param {HTMLElement} el @param {unknown} error */
function showLoadError(el, error) {
  const reason = error instanceof Error ? error.message : String(error);
  console.error(LOG_PREFIX, "could not load the front end from the shared bundle model:", error);
  el.textContent = `${LOG_PREFIX} could not load the front end from the shared bundle model: ${reason}; ${INLINE_HINT}.`;
}


/**
 * The prebuilt extension's front end when it is the build the kernel carries (same digest), else null.
 * @param {unknown} digest the FrontEndBundle's digest
 * @returns {any}
 */
export function prebuiltFor(digest) {
  const prebuilt = /** @type {any} */ (globalThis)[PREBUILT];
  if (!prebuilt || typeof digest !== "string" || digest === "" || prebuilt.digest !== digest) return null;
  const widget = prebuilt.default;
  return widget && typeof widget.render === "function" ? widget : null;
}

/**
 * The bundle's widget (`{render}`) for a view's model: the prebuilt copy when its digest matches
 * (its CSS is the extension's style), else the FrontEndBundle decoded and imported once per page.
 * @param {any} model @param {Document} doc
 * @returns {Promise<any>}
 */
export async function loadFrontEnd(model, doc) {
  const bundle = await resolveBundleModel(model);
  const prebuilt = prebuiltFor(bundle.get("digest"));
  if (prebuilt) {
    // the extension's style holds the same CSS where JupyterLab loaded it; the bundle's copy is put in
    // the page too (once per digest, not waited for), so a host without that style still has it
    const css = bundle.get("css");
    const digest = bundle.get("digest");
    if (typeof css === "string" && css !== "") {
      decode(css, bundle.get("encoding")).then((text) => injectCss(doc, digest, text), () => {});
    }
    return prebuilt;
  }
  const widget = (await importBundle(bundle, doc)).default;
  if (!widget || typeof widget.render !== "function") throw new Error("the bundle exports no render()");
  return widget;
}

/** Kernel messages an EarlyFeed keeps at most (a 30 ms batch each: about 30 s of a stream)… */
export const MAX_EARLY_MESSAGES = 1000;
/** …and characters of their JSON at most (a long snapshot alone may exceed it). */
export const MAX_EARLY_CHARS = 4_000_000;

/**
 * @typedef {import("./protocol.js").KernelMessage} KernelMessage
 * @typedef {{messages: KernelMessage[], complete: boolean}} EarlyMessages what a view starts from:
 *   the kernel messages after the synced `_snapshot`, in order, and whether none was dropped since it
 */

/**
 * A model's kernel messages from its creation on, for the views that render later (each takes a copy).
 *
 * Bounded: over MAX_EARLY_MESSAGES or MAX_EARLY_CHARS the oldest are dropped and the feed is no longer
 * complete, so a view taking it asks the kernel for a snapshot (its store applies no batch after a gap,
 * so a partial sequence is never applied). What the synced `_snapshot` already holds is let go (its seq
 * covers it), and a snapshot message replaces everything before it; either one covering the newest
 * dropped message makes the feed complete again.
 */
export class EarlyFeed {
  /**
   * @param {{get(name: string): any, on(event: string, cb: Function): void, off(event: string, cb: Function): void}} model
   * @param {{maxMessages?: number, maxChars?: number}} [limits]
   */
  constructor(model, { maxMessages = MAX_EARLY_MESSAGES, maxChars = MAX_EARLY_CHARS } = {}) {
    this.model = model;
    this.maxMessages = maxMessages;
    this.maxChars = maxChars;
    /** @type {{message: KernelMessage, chars: number}[]} */
    this.kept = [];
    this.chars = 0;
    /** The seq of the newest message dropped for room, -1 when none is missing. */
    this.lostThrough = -1;
    this.stopped = false;
    /** @param {unknown} received */
    this.onMessage = (received) => this.push(received);
    this.onTrait = () => this.trim(peekSeq(model.get("_snapshot")));
    model.on("msg:custom", this.onMessage);
    model.on("change:_snapshot", this.onTrait);
  }

  /** @param {unknown} received */
  push(received) {
    if (this.stopped || !isKernelMessage(received)) return;
    if (received.kind === "snapshot") {
      // the whole state at its seq: nothing before it is needed any more
      this.kept = [];
      this.chars = 0;
      this.lostThrough = -1;
    }
    const chars = JSON.stringify(received).length;
    this.kept.push({ message: received, chars });
    this.chars += chars;
    while (this.kept.length > 0 && (this.kept.length > this.maxMessages || this.chars > this.maxChars)) {
      const dropped = /** @type {{message: KernelMessage, chars: number}} */ (this.kept.shift());
      this.chars -= dropped.chars;
      this.lostThrough = Math.max(this.lostThrough, dropped.message.seq);
    }
  }

  /**
   * Let go of what a state at `seq` (the synced trait) already holds.
   * @param {number | null} seq
   */
  trim(seq) {
    if (seq === null) return;
    while (this.kept.length > 0 && this.kept[0].message.seq <= seq) {
      this.chars -= /** @type {{chars: number}} */ (this.kept.shift()).chars;
    }
    if (this.lostThrough <= seq) this.lostThrough = -1;
  }

  /** @returns {EarlyMessages} a copy for one view (the feed goes on for the next) */
  take() {
    this.trim(peekSeq(this.model.get("_snapshot")));
    return { messages: this.kept.map((entry) => entry.message), complete: this.lostThrough < 0 };
  }

  stop() {
    if (this.stopped) return;
    this.stopped = true;
    this.kept = [];
    this.chars = 0;
    this.model.off("msg:custom", this.onMessage);
    this.model.off("change:_snapshot", this.onTrait);
  }
}

/**
 * One model's loader: anywidget imports a view's `_esm` once per model, so the state here (the feed,
 * the bundle on its way) is that model's. Should a host share one module between models, the second
 * `initialize` turns the feed off (views then ask the kernel, as without it) rather than mix two
 * models' messages.
 */
export function createLoader() {
  /** @type {EarlyFeed | null} */
  let feed = null;
  /** @type {Promise<any> | null} */
  let loading = null;
  let models = 0;

  return {
    /**
     * Called when the model is created, before any view: listen at once, start loading the bundle,
     * and return without waiting for it (anywidget holds the model's messages until this returns).
     * @param {{model: any, signal?: AbortSignal}} props
     */
    initialize({ model, signal }) {
      models += 1;
      if (models > 1) {
        feed?.stop();
        feed = null;
        loading = null;
        return undefined;
      }
      feed = new EarlyFeed(model);
      const own = feed;
      loading = loadFrontEnd(model, document);
      loading.catch(() => {}); // render reports it (and tries once more)
      const stop = () => {
        own.stop();
        if (feed === own) feed = null;
      };
      signal?.addEventListener("abort", stop, { once: true });
      return stop;
    },

    /** @param {{model: any, el: HTMLElement, signal?: AbortSignal}} props */
    async render(props) {
      let widget;
      try {
        const doc = props.el.ownerDocument;
        widget = loading ? await loading.catch(() => loadFrontEnd(props.model, doc)) : await loadFrontEnd(props.model, doc);
      } catch (error) {
        showLoadError(props.el, error);
        return undefined;
      }
      if (props.signal?.aborted) return undefined; // the view went away while the bundle loaded
      // take and render in one step: no message can come in between
      return widget.render(feed ? { ...props, early: feed.take() } : props);
    },
  };
}

export default createLoader();
