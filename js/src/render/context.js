/**
 * The context transcript, rendered as a window: only the last `pageSize` entries at first, and one
 * more page above each time the "earlier messages" sentinel at the top scrolls into view
 * (IntersectionObserver on the scroll container) or is clicked. The window holds at most
 * `maxRendered` entries (WINDOW_PAGES pages): a page loaded above drops as many from the bottom (below
 * the screen), and the "later messages" sentinel there loads them back, dropping from the top with
 * the scroll position kept. So a 10,000-message context costs one page of DOM to show and at most
 * a window wherever it is scrolled, and every entry stays reachable. A window that shows the newest
 * entry keeps following appends.
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

/** Pages the rendered window holds at most (240 entries by default): DOM, style and layout work per frame stay
 * bounded (in JupyterLab a 600-entry window gave 11 tasks over 50 ms loading 10,000 entries, 240 gave 0-2). */
export const WINDOW_PAGES = 4;

export class ContextList {
  /**
   * @param {{pageSize?: number, sliceSize?: number, maxRendered?: number, schedule?: (task: () => void) => () => void,
   *   scrollRoot?: HTMLElement | null, IntersectionObserver?: typeof IntersectionObserver | null}} [options]
   *   `schedule(task)` runs `task` later and returns a function that cancels it.
   */
  constructor(options = {}) {
    this.pageSize = options.pageSize ?? 60;
    this.sliceSize = Math.max(1, options.sliceSize ?? (options.pageSize === undefined ? SLICE_SIZE : this.pageSize));
    this.maxRendered = Math.max(this.pageSize, options.maxRendered ?? WINDOW_PAGES * this.pageSize);
    this.schedule = options.schedule ?? laterTask;
    /** @type {(() => void) | null} cancels the scheduled slice */
    this.cancelSlice = null;
    this.scrollRoot = options.scrollRoot ?? null;
    /** @type {any[]} */
    this.messages = [];
    /** How many messages there were when the window was last placed: the store grows `messages` in
     * place before `update` runs, so its length then is already the new one. */
    this.placedLength = 0;
    /** The rendered window is [start, end); `target` ≤ start and `targetEnd` ≥ end are where slices still go. */
    this.start = 0;
    this.end = 0;
    this.target = 0;
    this.targetEnd = 0;
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
    this.after = h("button", { type: "button", className: "actx-load-more actx-load-later", "data-testid": "actx-load-later", hidden: true });
    this.after.addEventListener("click", () => this.loadLater());
    this.list = h("div", { className: "actx-context-list", "data-testid": "actx-context" });
    this.el = h("section", { className: "actx-context" }, [this.sentinel, this.list, this.after]);

    const IO = options.IntersectionObserver === undefined ? globalThis.IntersectionObserver : options.IntersectionObserver;
    /** @type {IntersectionObserver | null} */
    this.observer = IO
      ? new IO((entries) => {
          // while a page is still coming in slices, its last slice re-checks the sentinels (updateSentinel)
          const near = (/** @type {Element} */ el) => entries.some((entry) => entry.isIntersecting && (entry.target ?? this.sentinel) === el);
          if (this.start > this.target || this.end < this.targetEnd) return;
          if (near(this.sentinel) && this.start > 0) this.loadMore();
          else if (near(this.after) && this.end < this.messages.length) this.loadLater();
        }, { root: this.scrollRoot, rootMargin: "200px 0px 200px 0px" })
      : null;
  }

  /**
   * @param {any[]} messages state.context
   * @param {"all" | number[]} changed
   */
  update(messages, changed) {
    const followsEnd = this.end >= this.placedLength; // the window showed the newest message
    this.messages = messages;
    if (changed === "all" || this.start > messages.length) {
      this.rebuild();
      return;
    }
    const length = messages.length;
    this.placedLength = length;
    this.end = followsEnd ? length : Math.min(this.end, length);
    this.targetEnd = Math.max(this.end, Math.min(this.targetEnd, length));
    this.target = Math.min(this.target, this.start);
    const before = this.links;
    this.computeLinks();
    const dirty = new Set(changed.filter((i) => i >= this.start && i < this.end));
    this.linkChanges(before, dirty);
    for (const [i, view] of this.views) {
      if (i >= this.end) {
        view.el.remove();
        this.views.delete(i);
      }
    }
    for (let i = this.start; i < this.end; i += 1) {
      if (!this.views.has(i) || dirty.has(i)) this.renderAt(i);
    }
    // a long run of appends while following: drop the oldest rendered, a page at a time
    if (this.end - this.start > this.maxRendered + this.pageSize) this.trimTop(this.end - this.maxRendered);
    this.updateSentinel();
  }

  rebuild() {
    this.stopSlices();
    this.views.clear();
    this.list.replaceChildren();
    const length = this.messages.length;
    this.placedLength = length;
    this.end = this.targetEnd = length;
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

  /** Ask for one more page above the first rendered message (in slices, keeping the scroll position). */
  loadMore() {
    if (this.start === 0) return;
    this.target = Math.max(0, Math.min(this.target, this.start) - this.pageSize);
    this.stopSlices();
    this.renderSlice();
  }

  /** Ask for one more page below the last rendered message (a window scrolled away from the newest). */
  loadLater() {
    if (this.end >= this.messages.length) return;
    this.targetEnd = Math.min(this.messages.length, Math.max(this.targetEnd, this.end) + this.pageSize);
    this.stopSlices();
    this.renderSlice();
  }

  /** Render the next slice (above first, then below), then keep the window within maxRendered. */
  renderSlice() {
    this.cancelSlice = null;
    if (this.start > this.target) this.sliceAbove();
    else if (this.end < this.targetEnd) this.sliceBelow();
    this.continueSlices();
    this.updateSentinel();
  }

  sliceAbove() {
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
    // what falls out of the window is below the screen: dropping it moves nothing in view
    if (this.end - this.start > this.maxRendered) this.dropFrom(this.start + this.maxRendered);
  }

  sliceBelow() {
    const oldEnd = this.end;
    this.end = Math.min(this.targetEnd, oldEnd + this.sliceSize);
    const before = this.links;
    this.computeLinks();
    const fragment = document.createDocumentFragment();
    for (let i = oldEnd; i < this.end; i += 1) fragment.append(this.viewFor(i).el);
    this.list.append(fragment);
    /** @type {Set<number>} */
    const dirty = new Set();
    this.linkChanges(before, dirty);
    for (const i of dirty) if (i < oldEnd) this.renderAt(i);
    if (this.end - this.start > this.maxRendered) this.trimTop(this.end - this.maxRendered);
  }

  /** Remove the rendered entries from `index` on (below the screen). @param {number} index */
  dropFrom(index) {
    for (let i = index; i < this.end; i += 1) {
      this.views.get(i)?.el.remove();
      this.views.delete(i);
    }
    this.end = this.targetEnd = index;
  }

  /** Remove the rendered entries before `index` (above the screen), keeping what is in view in place. @param {number} index */
  trimTop(index) {
    const root = this.scrollRoot;
    const heightBefore = root ? root.scrollHeight : 0;
    for (let i = this.start; i < index; i += 1) {
      this.views.get(i)?.el.remove();
      this.views.delete(i);
    }
    this.start = this.target = index;
    const before = this.links;
    this.computeLinks();
    /** @type {Set<number>} */
    const dirty = new Set();
    this.linkChanges(before, dirty);
    for (const i of dirty) this.renderAt(i);
    if (root) root.scrollTop -= heightBefore - root.scrollHeight;
  }

  /** Schedule the next slice when the window is not complete yet. */
  continueSlices() {
    const pending = this.start > this.target || this.end < this.targetEnd;
    if (pending && this.cancelSlice === null) this.cancelSlice = this.schedule(() => this.renderSlice());
  }

  stopSlices() {
    this.cancelSlice?.();
    this.cancelSlice = null;
  }

  updateSentinel() {
    const hidden = this.start === 0;
    this.sentinel.hidden = hidden;
    this.sentinel.textContent = hidden ? "" : `↑ Show earlier messages (${this.start} more)`;
    const later = this.messages.length - this.end;
    this.after.hidden = later <= 0;
    this.after.textContent = later <= 0 ? "" : `↓ Show later messages (${later} more)`;
    if (this.observer) {
      // Re-observing makes the observer report the current state again, so a sentinel that is
      // still visible once a page is complete loads the next one (while slices are still coming,
      // the observer's answer would be ignored: skip the intersection work).
      const pending = this.start > this.target || this.end < this.targetEnd;
      for (const el of [this.sentinel, this.after]) {
        if (pending && !el.hidden) continue;
        this.observer.unobserve(el);
        if (!el.hidden) this.observer.observe(el);
      }
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
    for (let j = i + 1; j < this.end; j += 1) {
      const next = this.views.get(j);
      if (next) {
        this.list.insertBefore(view.el, next.el);
        return;
      }
    }
    this.list.append(view.el);
  }

  /** Recompute which results sit beneath which rendered call (a result past the window's end too). */
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
        if (owner === undefined || owner < this.start || owner >= this.end) continue;
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
    for (const i of Array.from(dirty)) if (i < this.start || i >= this.end) dirty.delete(i);
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
