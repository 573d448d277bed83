/**
 * The output messages (delta-engine state `{order, messages}`), each in a wrapper carrying
 * `data-output-id` / `data-kind`; messages that share a `group_id` sit in one group box placed where
 * the group's first message appeared.
 *
 * From a Yao stream (agentctx_widgets/yao/view_bridge.py): a group is a Yao block, its title taken from
 * `metadata.block` ({id, type, label?, duration_ms?, status?}) of a member, and a message with a
 * `metadata.duration_ms` (its message_end) carries a duration chip unless it was one chunk (a Send ends
 * as it starts: `chunk_count` 1).
 *
 * An output message that repeats a block of an assistant message the view shows (the runner sends the
 * reply's text, thinking and tool calls as output messages, as Yao's stream handler does) is folded
 * into one line, "… · as in the reply above", that opens to the whole message (docs/decisions.md):
 * `text` / `thinking` with the same text as a text / thinking block, `tool_call` with a toolCall
 * block's call id. The static document (agentctx_widgets/html/outputs.py) folds the same ones.
 */
import { h, renderFailure } from "./dom.js";
import { EXECUTE_RENDERERS } from "./execute.js";
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
    /** Keys of the blocks the view's assistant messages show (`replyKeys`): the context's, the pending reply's. */
    this.replies = [new Set(), new Set()];
  }

  /** @param {string} key */
  repeats(key) {
    return this.replies.some((keys) => keys.has(key));
  }

  /**
   * The assistant messages the view shows changed: fold or unfold the outputs that repeat them.
   * @param {Set<string>} contextKeys @param {Set<string>} pendingKeys
   */
  setReplies(contextKeys, pendingKeys) {
    const before = this.replies;
    this.replies = [contextKeys, pendingKeys];
    for (const id of this.state.order) {
      const message = this.state.messages[id];
      const key = message ? repeatKey(message) : null;
      if (key === null || !this.views.has(id)) continue;
      if (before.some((keys) => keys.has(key)) === this.repeats(key)) continue;
      const old = /** @type {{wrapper: HTMLElement}} */ (this.views.get(id));
      const fresh = this.build(message, id);
      old.wrapper.replaceWith(fresh.wrapper);
      this.views.set(id, fresh);
    }
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
    const render = (Object.hasOwn(OUTPUT_RENDERERS, type) && OUTPUT_RENDERERS[type])
      || (Object.hasOwn(EXECUTE_RENDERERS, type) && EXECUTE_RENDERERS[type]) || genericOutput;
    /** @type {import("./output-types.js").OutputView} */
    let view;
    try {
      view = render(withProps(message));
    } catch (error) {
      view = { el: renderFailure(`output ${id}`, error, message) };
    }
    const key = repeatKey(message);
    const repeats = key !== null && this.repeats(key);
    const body = repeats
      ? h("details", { className: "actx-repeat", "data-testid": "actx-repeat" }, [
        h("summary", { className: "actx-repeat-line", text: repeatLabel(message) }), view.el])
      : view.el;
    const wrapper = h("div", {
      className: `actx-out actx-out-${/^[\w-]+$/.test(type) ? type : "unknown"}`,
      "data-output-id": id,
      "data-kind": type,
    }, [body]);
    if (repeats) wrapper.setAttribute("data-repeats", "reply");
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
    const ms = messageDuration(message.metadata);
    let chip = /** @type {HTMLElement | null} */ (wrapper.querySelector(":scope > .actx-duration"));
    if (ms !== null) {
      if (!chip) wrapper.append((chip = h("span", { className: "actx-duration", "data-testid": "actx-duration" })));
      chip.textContent = formatDuration(ms);
      chip.title = `${Math.round(ms)} ms (message_end duration_ms)`;
    } else chip?.remove();
    const block = message.metadata?.block;
    if (block && typeof block === "object" && typeof message.group_id === "string") {
      const title = this.groups.get(message.group_id)?.parentElement?.querySelector(":scope > .actx-group-title");
      if (title) blockTitle(/** @type {HTMLElement} */ (title), block);
    }
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
      const block = message.metadata?.block;
      if (block && typeof block === "object") blockTitle(/** @type {HTMLElement} */ (box.firstElementChild), block);
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

/**
 * The key of an output message that may repeat a reply's block, or null: `text` / `thinking` with a
 * string `props.content`, `tool_call` with a string `props.id`.
 * @param {OutputMessage} message
 */
export function repeatKey(message) {
  const props = message.props && typeof message.props === "object" ? /** @type {Record<string, unknown>} */ (message.props) : {};
  if ((message.type === "text" || message.type === "thinking") && typeof props.content === "string" && props.content)
    return `${message.type}\u0000${props.content}`;
  if (message.type === "tool_call" && typeof props.id === "string" && props.id) return `toolCall\u0000${props.id}`;
  return null;
}

/**
 * The keys of the text, thinking and toolCall blocks of the assistant messages (type 3) in `entries`.
 * @param {any[]} entries
 */
export function replyKeys(entries) {
  const keys = new Set();
  for (const message of entries) {
    if (!message || message.type !== 3 || !Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (!block || typeof block !== "object") continue;
      if ((block.type === "text" || block.type === "thinking") && typeof block.text === "string" && block.text)
        keys.add(`${block.type}\u0000${block.text}`);
      else if (block.type === "toolCall" && typeof block.callId === "string" && block.callId) keys.add(`toolCall\u0000${block.callId}`);
    }
  }
  return keys;
}

/** `text · as in the reply above`, `tool_call get_weather · as in the reply above`. @param {OutputMessage} message */
function repeatLabel(message) {
  const props = /** @type {Record<string, unknown>} */ (message.props ?? {});
  const name = message.type === "tool_call" && typeof props.name === "string" ? ` ${props.name}` : "";
  return `${message.type}${name} · as in the reply above`;
}

/** A measured duration: a finite number above 0 (0 is "no time measured": a replay, a Send). @param {unknown} ms */
const measured = (ms) => typeof ms === "number" && Number.isFinite(ms) && ms > 0;

/**
 * The duration to show for a message: `duration_ms` when it is a measured time (above 0) and the message
 * was more than one chunk (or the count is not known); else null (no chip).
 * @param {any} metadata
 */
export function messageDuration(metadata) {
  const ms = metadata?.duration_ms;
  const chunks = metadata?.chunk_count;
  if (!measured(ms)) return null;
  return typeof chunks === "number" && chunks <= 1 ? null : ms;
}

/** `<1 ms`, `850 ms`, `1.5 s`, `2m 05s` (never `0 ms`). @param {number} ms */
export function formatDuration(ms) {
  if (ms < 0.5) return "<1 ms";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
}

/**
 * A Yao block's title: its label (or `Block <id>`), its type, and once it ended its duration.
 * @param {HTMLElement} title @param {Record<string, any>} block
 */
function blockTitle(title, block) {
  const str = (/** @type {unknown} */ v) => (typeof v === "string" && v ? v : null);
  const name = str(block.label) ?? `Block ${str(block.id) ?? ""}`.trim();
  const kind = str(block.type);
  const ms = measured(block.duration_ms) ? block.duration_ms : null;
  title.classList.add("actx-block-title");
  const parts = [
    h("span", { className: "actx-block-name", text: name }),
    kind ? h("span", { className: "actx-block-type", text: kind }) : null,
    str(block.status) && block.status !== "completed" ? h("span", { className: "actx-block-status", text: block.status }) : null,
    ms ? h("span", { className: "actx-duration", "data-testid": "actx-block-duration", text: formatDuration(ms) }) : null,
  ];
  title.replaceChildren(...parts.filter((p) => p !== null));
  title.parentElement?.setAttribute("data-block-id", str(block.id) ?? "");
}
