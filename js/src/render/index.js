/**
 * ContextView renderer: `createRenderer(el) -> {update(state, changes), destroy()}`
 * (contract: docs/internals.md "ContextView and its stream protocol").
 *
 * `state = {seq, header, context, pending, outputs}`; `changes = {header?: true, context?: "all" |
 * number[], pending?: true, outputs?: "all" | string[]}` says what moved since the last call
 * (omitted `changes` = redraw everything). Rendering is incremental: a pending text that grows by
 * a few characters re-parses only its unfinished Markdown tail.
 *
 * DOM attributes for tests (stable; every class is prefixed `actx-`):
 *   [data-testid=actx-root]            the widget root (`.actx-root`)
 *   [data-testid=actx-header]          header; `-name`, `-count`, `-model` children
 *   [data-testid=actx-gauge]           usage gauge, `data-percent` (rounded), `data-level` low|mid|high;
 *                                      `hidden` when the window is null
 *   [data-testid=actx-cost]            what the last turn and the context cost: [data-testid=actx-turn-cost],
 *                                      [data-testid=actx-context-cost] (each `hidden` while unknown, a `title`
 *                                      saying where the figure came from, data-unpriced / data-estimated 0|1)
 *   [data-testid=actx-body]            the scroll container (context, pending, outputs)
 *   [data-testid=actx-context]         context list (a window of at most 4 pages); [data-testid=actx-load-more]
 *                                      the sentinel/button above it, [data-testid=actx-load-later] the one below
 *   .actx-msg[data-index=i][data-kind] one context entry; kind = system|user|assistant|tool|record|unknown
 *   .actx-msg-anchor[data-anchor-index=i]  hidden slot of a tool result drawn beneath its call
 *   .actx-block[data-block=<type>][data-block-index=k]  a content block (text|thinking|toolCall|image|binary|unknown);
 *                                      toolCall blocks carry data-call-id
 *   [data-testid=actx-tool-result]     a tool result (data-call-id; data-index when linked; data-error=true when failed)
 *   [data-testid=actx-response-error]  a failed response's error; [data-testid=actx-retry] its retry hint
 *   [data-testid=actx-pending]         the streaming assistant message (data-streaming=true; false once it
 *                                      stopped with an error, e.g. an interrupted reply the kernel did not commit)
 *   [data-testid=actx-outputs]         output list; .actx-out[data-output-id][data-kind] one output message
 *                                      (data-done=true once done); .actx-group[data-group-id] a group box
 *   .actx-md                           a Markdown container (.actx-md-chunk finished parts, .actx-md-tail the rest)
 *   [data-testid=actx-remote-img]      a click-to-load remote image, audio or video (data-kind; data-src for images)
 *   [data-testid=actx-blocked-url]     a media URL that was refused, shown as text
 *   [data-testid=actx-file]            a file chip (name, type, size)
 */
import { ContextList } from "./context.js";
import { LOG_PREFIX, h, warn } from "./dom.js";
import { HeaderView } from "./header.js";
import { createMessageView } from "./messages.js";
import { OutputList, replyKeys } from "./outputs.js";
import { cancelSettlesWithin } from "./markdown.js";
import { loadRemoteImage } from "./click-to-load.js";

export { LOG_PREFIX };

/**
 * @typedef {{header?: true | boolean, context?: "all" | number[], pending?: true | boolean, outputs?: "all" | string[]}} Changes
 * @typedef {{seq?: number, header?: any, context?: any[], pending?: any, outputs?: {order: string[], messages: Record<string, any>}}} ViewState
 * @typedef {{pageSize?: number, sliceSize?: number, maxRendered?: number, schedule?: (task: () => void) => () => void,
 *   IntersectionObserver?: typeof IntersectionObserver | null}} RendererOptions
 */

/** Pixels from the bottom within which the view keeps following new content. */
const STICKY_PX = 48;

/** A User Timing mark set when a renderer is created (a view's render()): benchmarks time the first screen from it. */
export const RENDER_MARK = "agentctx-widgets:render";

/**
 * Mount a renderer into `el`.
 * @param {HTMLElement} el
 * @param {RendererOptions} [options]
 * @returns {{update: (state: ViewState, changes?: Changes) => void, destroy: () => void, root: HTMLElement}}
 */
export function createRenderer(el, options = {}) {
  globalThis.performance?.mark?.(RENDER_MARK);
  const controller = new AbortController();
  const parts = mountParts(el, options);
  const { root, body } = parts;
  const follower = followNewest(body, controller.signal);
  root.addEventListener("click", (event) => {
    const target = /** @type {Element | null} */ (event.target instanceof Element ? event.target : null);
    const button = target?.closest(".actx-remote-img");
    if (button) loadRemoteImage(button); // a Markdown image's placeholder (sanitize.js); the others load themselves
  }, { signal: controller.signal });
  const updater = viewUpdater(parts);

  return {
    root,
    update(state, changes) {
      try {
        updater(state, changes);
      } catch (error) {
        warn("render update failed:", error);
      }
      if (follower.following()) follower.schedule();
    },
    destroy() {
      controller.abort();
      cancelSettlesWithin(root); // no Markdown catch-up may fire into a removed view
      parts.contextList.destroy();
      root.remove();
    },
  };
}

/**
 * @typedef {{root: HTMLElement, body: HTMLElement, header: HeaderView, contextList: ContextList,
 *   pending: PendingReply, outputs: OutputList}} RendererParts
 */

/**
 * Build the view's DOM (header, then a scroll body of context, pending reply and outputs) into `el`.
 * @param {HTMLElement} el @param {RendererOptions} options @returns {RendererParts}
 */
function mountParts(el, options) {
  const header = new HeaderView();
  const body = h("div", { className: "actx-body", "data-testid": "actx-body" });
  const contextList = new ContextList({
    pageSize: options.pageSize,
    sliceSize: options.sliceSize,
    maxRendered: options.maxRendered,
    schedule: options.schedule,
    scrollRoot: body,
    IntersectionObserver: options.IntersectionObserver,
  });
  const pending = new PendingReply();
  const outputs = new OutputList();
  body.append(contextList.el, pending.slot, outputs.el);
  const root = h("div", { className: "actx-root", "data-testid": "actx-root" }, [header.el, body]);
  el.append(root);
  return { root, body, header, contextList, pending, outputs };
}

/**
 * Follow new content while the reader is at the bottom of `body`: `following()` says whether they are
 * (updated on scroll), `schedule()` scrolls to the newest content once per frame.
 * @param {HTMLElement} body @param {AbortSignal} signal
 */
function followNewest(body, signal) {
  let follow = true;
  let queued = false;
  body.addEventListener("scroll", () => {
    follow = body.scrollHeight - body.scrollTop - body.clientHeight <= STICKY_PX;
  }, { signal, passive: true });
  /** Keep the newest content in view, once per frame (reading scrollHeight forces a layout). */
  function schedule() {
    if (queued) return;
    queued = true;
    const run = () => {
      queued = false;
      if (follow && !signal.aborted) body.scrollTop = body.scrollHeight;
    };
    if (typeof requestAnimationFrame === "function") requestAnimationFrame(run);
    else run();
  }
  return { following: () => follow, schedule };
}

/**
 * `update(state, changes)` without its guard: redraws what `changes` names (everything when omitted).
 * @param {RendererParts} parts @returns {(state: ViewState, changes?: Changes | null) => void}
 */
function viewUpdater({ header, contextList, pending, outputs }) {
  /** The keys of the blocks the context's and the pending reply's assistant messages show (outputs.js). */
  let contextReplies = new Set();
  let pendingReplies = new Set();
  return (state, changes) => {
    const all = changes === undefined || changes === null;
    const ch = changes ?? {};
    const context = Array.isArray(state.context) ? state.context : [];
    if (all || ch.header) header.update(state.header, context.length);
    if (all || ch.context) contextList.update(context, all ? "all" : /** @type {"all" | number[]} */ (ch.context));
    if (all || ch.pending) pending.render(state.pending ?? null);
    if (all || ch.context) contextReplies = replyKeys(context);
    if (all || ch.pending) pendingReplies = replyKeys(state.pending ? [state.pending] : []);
    if (all || ch.context || ch.pending) outputs.setReplies(contextReplies, pendingReplies);
    if (all || ch.outputs) outputs.update(state.outputs, all ? "all" : /** @type {"all" | string[]} */ (ch.outputs));
  };
}

/** The streaming assistant reply, drawn in its own slot between the context and the outputs. */
class PendingReply {
  constructor() {
    this.slot = h("div", { className: "actx-pending-slot" });
    /** @type {import("./messages.js").MessageView | null} */
    this.view = null;
  }

  /** @param {any} message the pending reply, or null when there is none */
  render(message) {
    if (!message) {
      this.view?.el.remove();
      this.view = null;
      return;
    }
    // a pending reply with an error stopped (an interrupt, a failed stream): no longer "streaming"
    const streaming = message.error === undefined || message.error === null;
    const env = { index: null, streaming };
    if (this.view?.update && this.view.update(message, env)) {
      this.view.el.setAttribute("data-streaming", String(streaming));
      return;
    }
    const view = createMessageView(message, env);
    view.el.setAttribute("data-testid", "actx-pending");
    view.el.setAttribute("data-streaming", String(streaming));
    if (this.view) this.view.el.replaceWith(view.el);
    else this.slot.append(view.el);
    this.view = view;
  }
}
