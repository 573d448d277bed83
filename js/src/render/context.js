/**
 * The context transcript, rendered lazily: only the last `pageSize` entries at first, and one more
 * page above each time the "earlier messages" sentinel at the top scrolls into view
 * (IntersectionObserver on the scroll container) or is clicked. So a 10,000-message context costs
 * one page of DOM to show, and scrolling up grows it a page at a time.
 *
 * A page is rendered in slices of `sliceSize` entries, newest first, one slice per task (the next
 * one after a `schedule` callback), so no task blocks the page for long: the first slice is the
 * first screen, and Markdown parsing of the rest of the page waits its turn. A caller that sets
 * `pageSize` without `sliceSize` gets whole pages at once (tests rely on that).
 *
 * Tool results are linked to their call: a type-4 message whose `callId` matches a toolCall block
 * of an earlier assistant message that is rendered is drawn beneath that call (the result's own
 * slot keeps a hidden anchor); otherwise it stands alone with its call id.
 */
import { h } from "./dom.js";
import { createMessageView, kindOf, renderToolResult } from "./messages.js";

/** @typedef {import("./messages.js").MessageView} MessageView */

/** Entries rendered per task by default: about two screens of a 70vh view. */
export const SLICE_SIZE = 16;

export class ContextList {
  /**
   * @param {{pageSize?: number, sliceSize?: number, schedule?: (task: () => void) => () => void,
   *   scrollRoot?: HTMLElement | null, IntersectionObserver?: typeof IntersectionObserver | null}} [options]
   *   `schedule(task)` runs `task` later and returns a function that cancels it.
   */
  constructor(options = {}) {
    this.pageSize = options.pageSize ?? 60;
    this.sliceSize = Math.max(1, options.sliceSize ?? (options.pageSize === undefined ? SLICE_SIZE : this.pageSize));
    this.schedule = options.schedule ?? laterTask;
    /** @type {(() => void) | null} cancels the scheduled slice */
    this.cancelSlice = null;
    this.scrollRoot = options.scrollRoot ?? null;
    /** @type {any[]} */
    this.messages = [];
    /** First rendered index. */
    this.start = 0;
    /** First index the current page wants rendered (< start while slices are still to come). */
    this.target = 0;
    /** @type {Map<number, MessageView>} */
    this.views = new Map();
    /** result index → owner (assistant) index, for results drawn beneath their call. */
    /** @type {Map<number, number>} */
    this.links = new Map();
    /** owner index → callId → result. */
    /** @type {Map<number, Map<string, {index: number, message: any}>>} */
    this.resultsByOwner = new Map();

    this.sentinel = h("button", { type: "button", className: "actx-load-more", "data-testid": "actx-load-more", hidden: true });
    this.sentinel.addEventListener("click", () => this.loadMore());
    this.list = h("div", { className: "actx-context-list", "data-testid": "actx-context" });
    this.el = h("section", { className: "actx-context" }, [this.sentinel, this.list]);

    const IO = options.IntersectionObserver === undefined ? globalThis.IntersectionObserver : options.IntersectionObserver;
    /** @type {IntersectionObserver | null} */
    this.observer = IO
      ? new IO((entries) => {
          // while a page is still coming in slices its end re-checks the sentinel (updateSentinel)
          if (entries.some((entry) => entry.isIntersecting) && this.start > 0 && this.target === this.start) this.loadMore();
        }, { root: this.scrollRoot, rootMargin: "200px 0px 0px 0px" })
      : null;
  }

  /**
   * @param {any[]} messages state.context
   * @param {"all" | number[]} changed
   */
  update(messages, changed) {
    this.messages = messages;
    this.target = Math.min(this.target, messages.length);
    if (changed === "all" || this.start > messages.length) {
      this.rebuild();
      return;
    }
    const before = this.links;
    this.computeLinks();
    const dirty = new Set(changed.filter((i) => i >= this.start && i < messages.length));
    this.linkChanges(before, dirty);
    for (const [i, view] of this.views) {
      if (i >= messages.length) {
        view.el.remove();
        this.views.delete(i);
      }
    }
    for (let i = this.start; i < messages.length; i += 1) {
      if (!this.views.has(i) || dirty.has(i)) this.renderAt(i);
    }
    this.updateSentinel();
  }

  rebuild() {
    this.stopSlices();
    this.views.clear();
    this.list.replaceChildren();
    const length = this.messages.length;
    this.target = Math.max(0, length - this.pageSize);
    // the first slice is the first screen: rendered now, the rest of the page in later tasks
    this.start = Math.max(this.target, length - this.sliceSize);
    this.computeLinks();
    const fragment = document.createDocumentFragment();
    for (let i = this.start; i < length; i += 1) fragment.append(this.viewFor(i).el);
    this.list.append(fragment);
    this.continueSlices();
    this.updateSentinel();
  }

  /** Ask for one more page above the first rendered message (rendered in slices, keeping the scroll position). */
  loadMore() {
    if (this.start === 0) return;
    this.target = Math.max(0, Math.min(this.target, this.start) - this.pageSize);
    this.stopSlices();
    this.renderSlice();
  }

  /** Render the next slice above the first rendered message, keeping the scroll position. */
  renderSlice() {
    this.cancelSlice = null;
    if (this.start <= this.target) return;
    const root = this.scrollRoot;
    const heightBefore = root ? root.scrollHeight : 0;
    const oldStart = this.start;
    this.start = Math.max(this.target, oldStart - this.sliceSize);
    const before = this.links;
    this.computeLinks();
    const fragment = document.createDocumentFragment();
    for (let i = this.start; i < oldStart; i += 1) fragment.append(this.viewFor(i).el);
    this.list.prepend(fragment);
    /** @type {Set<number>} */
    const dirty = new Set();
    this.linkChanges(before, dirty);
    for (const i of dirty) if (i >= oldStart) this.renderAt(i);
    if (root) root.scrollTop += root.scrollHeight - heightBefore;
    this.continueSlices();
    this.updateSentinel();
  }

  /** Schedule the next slice when the page is not complete yet. */
  continueSlices() {
    if (this.start > this.target && this.cancelSlice === null) this.cancelSlice = this.schedule(() => this.renderSlice());
  }

  stopSlices() {
    this.cancelSlice?.();
    this.cancelSlice = null;
  }

  updateSentinel() {
    const hidden = this.start === 0;
    this.sentinel.hidden = hidden;
    this.sentinel.textContent = hidden ? "" : `↑ Show earlier messages (${this.start} more)`;
    if (this.observer) {
      // Re-observing makes the observer report the current state again, so a sentinel that is
      // still visible after a page was added loads the next one.
      this.observer.unobserve(this.sentinel);
      if (!hidden) this.observer.observe(this.sentinel);
    }
  }

  /** @param {number} i @returns {import("./messages.js").MessageEnv} */
  envFor(i) {
    return {
      index: i,
      streaming: false,
      linked: this.links.has(i),
      resultFor: (callId) => this.resultsByOwner.get(i)?.get(callId) ?? null,
      renderResult: (result) => renderToolResult(result.message, result.index, true),
    };
  }

  /** @param {number} i */
  viewFor(i) {
    const view = createMessageView(this.messages[i], this.envFor(i));
    this.views.set(i, view);
    return view;
  }

  /** (Re)render index i in place, or insert it before the next rendered index. @param {number} i */
  renderAt(i) {
    const old = this.views.get(i);
    if (old?.update && old.update(this.messages[i], this.envFor(i))) return;
    const view = this.viewFor(i);
    if (old) {
      old.el.replaceWith(view.el);
      return;
    }
    for (let j = i + 1; j < this.messages.length; j += 1) {
      const next = this.views.get(j);
      if (next) {
        this.list.insertBefore(view.el, next.el);
        return;
      }
    }
    this.list.append(view.el);
  }

  /** Recompute which rendered results sit beneath which rendered call. */
  computeLinks() {
    /** @type {Map<string, number>} */
    const owners = new Map();
    this.links = new Map();
    this.resultsByOwner = new Map();
    const messages = this.messages;
    for (let i = 0; i < messages.length; i += 1) {
      const message = messages[i];
      const kind = kindOf(message);
      if (kind === "assistant" && Array.isArray(message.content)) {
        for (const block of message.content) {
          if (block && block.type === "toolCall" && typeof block.callId === "string") owners.set(block.callId, i);
        }
      } else if (kind === "tool" && typeof message.callId === "string") {
        const owner = owners.get(message.callId);
        if (owner === undefined || owner < this.start) continue;
        let byCall = this.resultsByOwner.get(owner);
        if (!byCall) this.resultsByOwner.set(owner, (byCall = new Map()));
        if (byCall.has(message.callId)) continue; // a second result for one call stands alone
        byCall.set(message.callId, { index: i, message });
        this.links.set(i, owner);
      }
    }
  }

  /**
   * Add to `dirty` every index whose drawing depends on a link that changed.
   * @param {Map<number, number>} before
   * @param {Set<number>} dirty
   */
  linkChanges(before, dirty) {
    for (const [result, owner] of before) {
      if (this.links.get(result) !== owner) dirty.add(result).add(owner);
    }
    for (const [result, owner] of this.links) {
      if (before.get(result) !== owner) dirty.add(result).add(owner);
      if (dirty.has(result)) dirty.add(owner);
    }
    for (const i of Array.from(dirty)) if (i < this.start || i >= this.messages.length) dirty.delete(i);
  }

  destroy() {
    this.stopSlices();
    this.observer?.disconnect();
  }
}

/**
 * Run `task` in a later task of its own (a message-channel post: no 4 ms timer clamp), cancellable.
 * @param {() => void} task
 * @returns {() => void}
 */
function laterTask(task) {
  let live = true;
  const run = () => {
    if (live) task();
  };
  if (typeof MessageChannel === "function") {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      run();
    };
    channel.port2.postMessage(null);
  } else {
    setTimeout(run, 0);
  }
  return () => {
    live = false;
  };
}
