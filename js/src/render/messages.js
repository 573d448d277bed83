/**
 * One renderer per context message kind (system, user, assistant, tool result, record), behind a
 * lookup table. A message view is `{el, update?(message, env): boolean}` like a block view; the
 * conversational kinds patch their blocks in place, so a merged or streaming message is cheap.
 */
import { createBlockView } from "./blocks.js";
import { h, prettyJson, renderFailure } from "./dom.js";

/**
 * @typedef {import("./blocks.js").BlockEnv} BlockEnv
 * @typedef {import("./blocks.js").BlockView} BlockView
 * @typedef {import("./blocks.js").LinkedResult} LinkedResult
 * @typedef {BlockEnv & {index: number | null, linked?: boolean}} MessageEnv
 * @typedef {{el: HTMLElement, update?: (message: any, env: MessageEnv) => boolean}} MessageView
 */

const KIND_BY_TYPE = /** @type {Record<number, string>} */ ({ 1: "system", 2: "user", 3: "assistant", 4: "tool" });
const LABELS = /** @type {Record<string, string>} */ ({ system: "System", user: "User", assistant: "Assistant", tool: "Tool result" });

/**
 * The kind of a context entry: a message kind, "record" (string type) or "unknown".
 * @param {any} message
 */
export function kindOf(message) {
  if (!message || typeof message !== "object" || Array.isArray(message)) return "unknown";
  if (typeof message.type === "string") return "record";
  return KIND_BY_TYPE[message.type] ?? "unknown";
}

/**
 * The text of a failed response (`error` string or `{message, retry}`), or "".
 * A tool result's boolean `error` is not one.
 * @param {any} message
 */
export function errorText(message) {
  const error = message?.error;
  if (typeof error === "string") return error;
  if (error && typeof error === "object" && typeof error.message === "string") return error.message;
  return "";
}

/** @param {any} message */
function renderResponseError(message) {
  const text = errorText(message);
  if (!text) return null;
  const retry = message.error && typeof message.error === "object" ? message.error.retry : undefined;
  return h("div", { className: "actx-error", role: "alert", "data-testid": "actx-response-error" }, [
    h("span", { className: "actx-error-title", text: "Response failed: " }),
    h("span", { className: "actx-error-message", text }),
    retry === undefined || retry === null || retry === false
      ? null
      : h("div", { className: "actx-retry", "data-testid": "actx-retry", text: `Retry hint: ${typeof retry === "object" ? JSON.stringify(retry) : String(retry)}` }),
  ]);
}

/** Fields shown as metadata: everything but the shape itself. @param {any} message */
function extraFields(message) {
  /** @type {Record<string, unknown>} */
  const rest = {};
  for (const [key, value] of Object.entries(message)) {
    if (key !== "type" && key !== "content" && key !== "error") rest[key] = value;
  }
  return Object.keys(rest).length ? rest : null;
}

/**
 * Shell of a message article: label row + body.
 * @param {string} kind
 * @param {MessageEnv} env
 * @param {string} [extraClass]
 */
function article(kind, env, extraClass = "") {
  const el = h("article", {
    className: `actx-msg actx-msg-${kind}${extraClass ? ` ${extraClass}` : ""}`,
    "data-kind": kind,
    "data-index": env.index === null ? null : String(env.index),
  });
  const label = h("div", { className: "actx-role", text: LABELS[kind] ?? kind });
  const body = h("div", { className: "actx-msg-body" });
  el.append(label, body);
  return { el, label, body };
}

/**
 * System, user and assistant messages: blocks patched in place, error box, metadata.
 * @param {string} kind
 * @returns {(message: any, env: MessageEnv) => MessageView}
 */
function conversational(kind) {
  return (message, env) => {
    const { el, body } = article(kind, env);
    /** @type {BlockView[]} */
    let views = [];
    /** @type {any[]} */
    let shown = [];
    /** @type {HTMLElement | null} */
    let tailEl = null;
    /** @param {any} msg @param {MessageEnv} e */
    const fill = (msg, e) => {
      const blocks = Array.isArray(msg.content) ? msg.content : [];
      const where = e.index === null ? "pending" : `context[${e.index}]`;
      blocks.forEach((/** @type {any} */ block, /** @type {number} */ i) => {
        const old = views[i];
        const sameType = old && shown[i]?.type === block?.type;
        if (old && sameType && old.update && old.update(block, e)) return;
        const view = createBlockView(block, e, `${where}.content[${i}]`);
        view.el.setAttribute("data-block-index", String(i));
        if (old) old.el.replaceWith(view.el);
        else body.insertBefore(view.el, tailEl);
        views[i] = view;
      });
      for (const view of views.slice(blocks.length)) view.el.remove();
      views = views.slice(0, blocks.length);
      shown = blocks.slice();
      tailEl?.remove();
      tailEl = null;
      const error = renderResponseError(msg);
      const meta = e.streaming ? null : extraFields(msg);
      if (!error && !meta) return;
      tailEl = h("div", { className: "actx-msg-tail" }, [
        error,
        meta
          ? h("details", { className: "actx-meta" }, [h("summary", { text: "metadata" }), h("pre", { className: "actx-json", text: prettyJson(meta) })])
          : null,
      ]);
      body.append(tailEl);
    };
    fill(message, env);
    return {
      el,
      update(next, nextEnv) {
        if (kindOf(next) !== kind) return false;
        el.classList.toggle("actx-streaming", nextEnv.streaming);
        fill(next, nextEnv);
        return true;
      },
    };
  };
}

/**
 * The body of a tool result: plain text blocks as preformatted text, other blocks by type.
 * @param {any} message
 * @param {number | null} index
 * @param {boolean} linked rendered beneath its call
 */
export function renderToolResult(message, index, linked) {
  const failed = message.error === true;
  const callId = typeof message.callId === "string" ? message.callId : "";
  const el = h("div", {
    className: `actx-tool-result${failed ? " actx-tool-failed" : ""}`,
    "data-testid": "actx-tool-result",
    "data-index": linked && index !== null ? String(index) : null,
    "data-call-id": callId || null,
    "data-error": failed ? "true" : null,
  });
  const call = `call ${callId || "(no call id)"}`;
  const head = linked ? (failed ? "✖ Tool failed" : "↳ Result") : failed ? `✖ Tool failed · ${call}` : `Result of ${call}`;
  el.append(h("div", { className: "actx-tool-result-head", text: head }));
  const blocks = Array.isArray(message.content) ? message.content : [];
  blocks.forEach((/** @type {any} */ block, /** @type {number} */ i) => {
    if (block && block.type === "text") {
      el.append(h("pre", { className: "actx-tool-output", "data-block": "text", text: String(block.text ?? "") }));
    } else {
      el.append(createBlockView(block, { streaming: false }, `context[${index}].content[${i}]`).el);
    }
  });
  return el;
}

/** @type {(message: any, env: MessageEnv) => MessageView} */
function tool(message, env) {
  if (env.linked) {
    // Shown beneath its call in an earlier assistant message; this anchor keeps index order.
    return { el: h("div", { className: "actx-msg-anchor", "data-anchor-index": String(env.index), hidden: true }) };
  }
  const { el, body } = article("tool", env, message.error === true ? "actx-msg-failed" : "");
  body.append(renderToolResult(message, env.index, false));
  return { el };
}

/** @type {(message: any, env: MessageEnv) => MessageView} */
function record(message, env) {
  const el = h("details", {
    className: "actx-msg actx-record",
    "data-kind": "record",
    "data-index": env.index === null ? null : String(env.index),
  }, [
    h("summary", {}, [h("span", { className: "actx-chip", text: "record" }), ` ${message.type}`]),
    h("pre", { className: "actx-json", text: prettyJson(message) }),
  ]);
  return { el };
}

/** @type {(message: any, env: MessageEnv) => MessageView} */
function unknown(message, env) {
  const { el, body } = article("unknown", env);
  body.append(h("pre", { className: "actx-json", text: prettyJson(message) }));
  return { el };
}

/** @type {Record<string, (message: any, env: MessageEnv) => MessageView>} */
export const MESSAGE_RENDERERS = {
  system: conversational("system"),
  user: conversational("user"),
  assistant: conversational("assistant"),
  tool,
  record,
  unknown,
};

/**
 * Build the view of one context entry (or the pending message); never throws.
 * @param {any} message
 * @param {MessageEnv} env
 * @returns {MessageView}
 */
export function createMessageView(message, env) {
  const kind = kindOf(message);
  try {
    const view = MESSAGE_RENDERERS[kind](message, env);
    if (env.streaming) view.el.classList.add("actx-streaming");
    return view;
  } catch (error) {
    const el = renderFailure(env.index === null ? "pending message" : `context[${env.index}]`, error, message);
    if (env.index !== null) el.setAttribute("data-index", String(env.index));
    return { el };
  }
}
