/**
 * The output messages (delta-engine state `{order, messages}`), each in a wrapper carrying
 * `data-output-id` / `data-kind`; messages that share a `group_id` sit in one group box placed where
 * the group's first message appeared.
 */
import { h, renderFailure } from "./dom.js";
import { OUTPUT_RENDERERS, genericOutput } from "./output-types.js";

/** @typedef {import("./output-types.js").OutputMessage} OutputMessage */

/** The message with `props` guaranteed to be an object, as renderers expect. @param {OutputMessage} message */
const withProps = (message) => ({ ...message, props: message.props && typeof message.props === "object" ? message.props : {} });

export class OutputList {
  constructor() {
    this.list = h("div", { className: "actx-output-list", "data-testid": "actx-outputs" });
    this.el = h("section", { className: "actx-outputs", hidden: true }, [h("div", { className: "actx-section-title", text: "Output" }), this.list]);
    /** @type {Map<string, {wrapper: HTMLElement, type: string, update?: (m: OutputMessage) => boolean}>} */
    this.views = new Map();
    /** @type {Map<string, HTMLElement>} group id → group body */
    this.groups = new Map();
    /** @type {{order: string[], messages: Record<string, OutputMessage>}} */
    this.state = { order: [], messages: {} };
  }

  /**
   * @param {{order: string[], messages: Record<string, OutputMessage>} | null | undefined} outputs
   * @param {"all" | string[]} changed
   */
  update(outputs, changed) {
    this.state = outputs && Array.isArray(outputs.order) ? outputs : { order: [], messages: {} };
    if (changed === "all") {
      this.views.clear();
      this.groups.clear();
      this.list.replaceChildren();
      for (const id of this.state.order) this.renderId(id);
    } else {
      for (const id of changed) this.renderId(id);
    }
    this.el.hidden = this.state.order.length === 0;
  }

  /** @param {string} id */
  renderId(id) {
    const message = this.state.messages[id];
    const old = this.views.get(id);
    if (!message) {
      if (old) this.removeView(id, old.wrapper);
      return;
    }
    if (old && old.type === String(message.type) && old.update && this.tryUpdate(old.update, message, id)) {
      this.markDone(old.wrapper, message);
      return;
    }
    const fresh = this.build(message, id);
    if (old && (old.wrapper.parentElement?.dataset.groupBody ?? null) === (message.group_id ?? null)) {
      old.wrapper.replaceWith(fresh.wrapper);
    } else {
      if (old) this.removeView(id, old.wrapper);
      this.place(id, message, fresh.wrapper);
    }
    this.views.set(id, fresh);
  }

  /** @param {(m: OutputMessage) => boolean} update @param {OutputMessage} message @param {string} id */
  tryUpdate(update, message, id) {
    try {
      return update(message);
    } catch (error) {
      renderFailure(`output ${id}`, error, message);
      return false;
    }
  }

  /** @param {OutputMessage} message @param {string} id */
  build(message, id) {
    const type = String(message.type);
    const render = (Object.hasOwn(OUTPUT_RENDERERS, type) && OUTPUT_RENDERERS[type]) || genericOutput;
    /** @type {import("./output-types.js").OutputView} */
    let view;
    try {
      view = render(withProps(message));
    } catch (error) {
      view = { el: renderFailure(`output ${id}`, error, message) };
    }
    const wrapper = h("div", {
      className: `actx-out actx-out-${/^[\w-]+$/.test(type) ? type : "unknown"}`,
      "data-output-id": id,
      "data-kind": type,
    }, [view.el]);
    this.markDone(wrapper, message);
    const update = view.update;
    return {
      wrapper,
      type,
      update: update ? (/** @type {OutputMessage} */ m) => update(withProps(m)) : undefined,
    };
  }

  /** @param {HTMLElement} wrapper @param {OutputMessage} message */
  markDone(wrapper, message) {
    if (message.done) wrapper.setAttribute("data-done", "true");
    else wrapper.removeAttribute("data-done");
    wrapper.hidden = message.type === "loading" && /** @type {HTMLElement} */ (wrapper.firstElementChild)?.hidden === true;
  }

  /** @param {string} id @param {HTMLElement} wrapper */
  removeView(id, wrapper) {
    const body = wrapper.parentElement;
    wrapper.remove();
    this.views.delete(id);
    if (body?.dataset.groupBody && body.childElementCount === 0) {
      body.parentElement?.remove();
      this.groups.delete(body.dataset.groupBody);
    }
  }

  /** Put a new wrapper in its group box, or at its place in `order`. @param {string} id @param {OutputMessage} message @param {HTMLElement} wrapper */
  place(id, message, wrapper) {
    const groupId = typeof message.group_id === "string" && message.group_id ? message.group_id : null;
    if (groupId) {
      const body = this.groups.get(groupId);
      if (body) {
        body.append(wrapper);
        return;
      }
      const newBody = h("div", { className: "actx-group-body", "data-group-body": groupId });
      const box = h("div", { className: "actx-group", "data-group-id": groupId }, [
        h("div", { className: "actx-group-title", text: `group ${groupId}` }),
        newBody,
      ]);
      newBody.append(wrapper);
      this.groups.set(groupId, newBody);
      this.insertTopLevel(id, box);
      return;
    }
    this.insertTopLevel(id, wrapper);
  }

  /** @param {string} id @param {HTMLElement} el */
  insertTopLevel(id, el) {
    const order = this.state.order;
    const at = order.indexOf(id);
    for (let k = at + 1; at !== -1 && k < order.length; k += 1) {
      const next = this.views.get(order[k]);
      if (!next) continue;
      const top = next.wrapper.parentElement?.dataset.groupBody ? next.wrapper.parentElement.parentElement : next.wrapper;
      if (top && top.parentElement === this.list) {
        this.list.insertBefore(el, top);
        return;
      }
    }
    this.list.append(el);
  }
}
