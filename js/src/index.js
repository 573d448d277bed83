// The anywidget entry of ContextView: model messages → protocol store → renderer.
import * as delta from "./delta.js";
import { connect, LOG_PREFIX } from "./protocol.js";
import { createRenderer } from "./render/index.js";
import { renderMarkdown } from "./render/markdown.js";

// The first Markdown a page renders pays for the parser's and the sanitizer's set-up: ~25 ms of a
// loaded 2-core machine, on the way to a fresh kernel's first character (bench/first_char.py). Pay it
// when the page is idle after this module loads (with the prebuilt extension: when JupyterLab starts).
const whenIdle = globalThis.requestIdleCallback ?? ((/** @type {() => void} */ task) => setTimeout(task, 0));
whenIdle(() => {
  try {
    renderMarkdown("*warm*");
  } catch {
    // a page where it fails shows the reason when a view renders
  }
});

/**
 * The store owns its outputs state (parsed from JSON), so the engine may write into it in place:
 * each op then costs its own size, not the state's.
 * @param {any} outputs @param {any} message
 */
function applyOut(outputs, message) {
  delta.applyMessageInPlace(outputs, message);
  return outputs;
}

export default {
  /**
   * `early`: the kernel messages the loader kept since the model was created (js/src/loader.js), so
   * the view starts from them instead of waiting for the kernel's answer to its `sync`.
   * @param {{model: any, el: HTMLElement, early?: import("./loader.js").EarlyMessages}} props
   */
  render({ model, el, early }) {
    const controller = new AbortController();
    el.classList.add("agentctx-view");
    const renderer = createRenderer(el);
    connect({
      model,
      renderer,
      applyOut,
      signal: controller.signal,
      early,
      // Tests and benchmarks wait on this attribute instead of sleeping.
      onRendered: (state) => {
        el.dataset.seq = String(state.seq);
      },
    });
    return () => {
      controller.abort();
      try {
        renderer.destroy();
      } catch (error) {
        console.warn(LOG_PREFIX, "cleanup failed", error);
      }
    };
  },
};
