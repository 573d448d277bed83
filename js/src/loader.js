// The `_esm` every ContextView carries instead of the whole front end (static/loader.js).
//
// anywidget stores a widget's `_esm` and `_css` in each model's state, so a notebook with ten views
// stored the bundle ten times. The kernel keeps one FrontEndBundle model (code and CSS, gzipped and
// base64-encoded: a third of the text's size in the notebook; a digest) and each view refers to it in
// its `_bundle` trait; this loader follows that reference, decodes and imports the bundle once per
// page (cached by digest on globalThis: every view's loader is a module of its own), injects the CSS
// once, and hands the view to the bundle's `render`.
import { LOG_PREFIX } from "./render/dom.js";

export const REF_PREFIX = "IPY_MODEL_";
const MODULES = Symbol.for("agentctx-widgets.bundle-modules");
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

export default {
  /** @param {{model: any, el: HTMLElement, signal?: AbortSignal}} props */
  async render(props) {
    let widget;
    try {
      const module = await importBundle(await resolveBundleModel(props.model), props.el.ownerDocument);
      widget = module.default;
      if (!widget || typeof widget.render !== "function") throw new Error("the bundle exports no render()");
    } catch (error) {
      showLoadError(props.el, error);
      return undefined;
    }
    if (props.signal?.aborted) return undefined; // the view went away while the bundle loaded
    return widget.render(props);
  },
};
