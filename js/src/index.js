// The anywidget entry of ContextView: model messages → protocol store → renderer.
import * as delta from "./delta.js";
import { connect, LOG_PREFIX } from "./protocol.js";
import { createRenderer } from "./render/index.js";

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
  /** @param {{model: any, el: HTMLElement}} props */
  render({ model, el }) {
    const controller = new AbortController();
    el.classList.add("agentctx-view");
    const renderer = createRenderer(el);
    connect({
      model,
      renderer,
      applyOut,
      signal: controller.signal,
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
