/**
 * One renderer per context content block type (seed 001 `ContentType`), behind a lookup table.
 *
 * A block view is `{el, update?(block, env): boolean}`; `update` returns false (or is missing)
 * when the caller should build a fresh view instead of patching this one.
 */
import { formatBytes, h, prettyJson, renderFailure } from "./dom.js";
import { remoteImageButton } from "./click-to-load.js";
import { StreamingMarkdown } from "./markdown.js";
import { base64Size, isInlineImage, isRemoteUrl, tryDataUrl } from "./urls.js";

/**
 * @typedef {{type?: unknown, [key: string]: any}} Block
 * @typedef {{index: number, message: any}} LinkedResult
 * @typedef {{streaming: boolean, resultFor?: (callId: string) => LinkedResult | null,
 *   renderResult?: (result: LinkedResult) => HTMLElement}} BlockEnv
 * @typedef {{el: HTMLElement, update?: (block: Block, env: BlockEnv) => boolean}} BlockView
 */

/** @param {string} kind @param {HTMLElement[]} children @param {Record<string, string|undefined>} [attrs] */
function blockEl(kind, children, attrs = {}) {
  return h("div", { className: `actx-block actx-block-${kind}`, "data-block": kind, ...attrs }, children);
}

/** @type {(block: Block, env: BlockEnv) => BlockView} */
function text(block, env) {
  const md = new StreamingMarkdown();
  md.update(String(block.text ?? ""), env.streaming);
  return {
    el: blockEl("text", [md.el]),
    update(next, nextEnv) {
      md.update(String(next.text ?? ""), nextEnv.streaming);
      return true;
    },
  };
}

/**
 * A collapsible "Thinking" box around streaming Markdown (thinking blocks and thinking outputs).
 * @param {string} text
 * @param {boolean} streaming
 * @returns {{el: HTMLElement, update: (text: string, streaming: boolean) => void}}
 */
export function thinkingBox(text, streaming) {
  const md = new StreamingMarkdown();
  const summary = h("summary");
  const el = h("details", { className: "actx-thinking", open: streaming }, [summary, md.el]);
  /** @param {string} t @param {boolean} s */
  const update = (t, s) => {
    md.update(t, s);
    summary.textContent = s ? "Thinking…" : "Thinking";
  };
  update(text, streaming);
  return { el, update };
}

/** @type {(block: Block, env: BlockEnv) => BlockView} */
function thinking(block, env) {
  const box = thinkingBox(String(block.text ?? ""), env.streaming);
  return {
    el: blockEl("thinking", [box.el]),
    update(next, nextEnv) {
      box.update(String(next.text ?? ""), nextEnv.streaming);
      return true;
    },
  };
}

/**
 * Tool arguments: pretty JSON, or the raw string when they did not parse.
 * @param {unknown} args
 */
function renderArguments(args) {
  if (typeof args === "string") {
    return h("pre", { className: "actx-args actx-args-raw", "data-args": "raw", title: "arguments (raw, not JSON)", text: args });
  }
  return h("pre", { className: "actx-args actx-json", "data-args": "json", text: args === undefined ? "{}" : prettyJson(args) });
}

/**
 * The head row (tool name, call id when not null) and arguments of a tool call (toolCall blocks and tool_call outputs).
 * @param {string} name
 * @param {string | null} callId
 * @param {unknown} args
 * @returns {HTMLElement[]}
 */
export function toolCallParts(name, callId, args) {
  return [
    h("div", { className: "actx-tool-head" }, [
      h("span", { className: "actx-tool-kind", text: "tool" }),
      h("span", { className: "actx-tool-name", text: name }),
      callId === null ? null : h("span", { className: "actx-call-id", text: callId }),
    ]),
    renderArguments(args),
  ];
}

/** @type {(block: Block, env: BlockEnv) => BlockView} */
function toolCall(block, env) {
  const callId = typeof block.callId === "string" ? block.callId : "";
  const result = callId && env.resultFor ? env.resultFor(callId) : null;
  const children = toolCallParts(String(block.name ?? "(unnamed tool)"), callId || null, block.arguments);
  if (result && env.renderResult) children.push(env.renderResult(result));
  return { el: blockEl("toolCall", children, { "data-call-id": callId || undefined }) };
}

/** @param {string} name @param {string} mimetype @param {number | null} size */
function fileChip(name, mimetype, size) {
  return h("span", { className: "actx-chip actx-file", "data-testid": "actx-file" }, [
    h("span", { className: "actx-chip-kind", text: "file" }),
    h("span", { className: "actx-file-name", text: name || "(unnamed file)" }),
    h("span", { className: "actx-file-meta", text: `${mimetype || "unknown type"}${size === null ? "" : ` · ${formatBytes(size)}`}` }),
  ]);
}

/** @type {(block: Block, env: BlockEnv) => BlockView} */
function image(block) {
  const mimetype = String(block.mimetype ?? block.mimeType ?? block.mediaType ?? "image/png");
  const base64 = typeof block.content === "string" ? block.content : typeof block.data === "string" ? block.data : null;
  const url = typeof block.url === "string" ? block.url : typeof block.source?.url === "string" ? block.source.url : null;
  const label = String(block.filename ?? block.alt ?? "");
  const inline = base64 !== null ? tryDataUrl(mimetype, base64, "image") : url && isInlineImage(url) ? url : null;
  let body;
  if (inline) body = h("img", { className: "actx-img", src: inline, alt: label || "image", loading: "lazy" });
  else if (url && isRemoteUrl(url)) body = remoteImageButton(url, label);
  else body = fileChip(label || "image", mimetype, base64 === null ? null : base64Size(base64));
  return { el: blockEl("image", [body]) };
}

/** @type {(block: Block, env: BlockEnv) => BlockView} */
function binary(block) {
  const mimetype = String(block.mimetype ?? "");
  const filename = String(block.filename ?? "");
  const base64 = typeof block.content === "string" ? block.content : "";
  const kind = mimetype.split("/")[0].toLowerCase();
  /** @type {HTMLElement[]} */
  const children = [];
  if (kind === "image" || kind === "audio" || kind === "video") {
    const src = tryDataUrl(mimetype, base64, kind);
    if (src && kind === "image") children.push(h("img", { className: "actx-img", src, alt: filename || "image" }));
    else if (src) children.push(h(kind, { className: `actx-${kind}`, src, controls: true, preload: "metadata" }));
  }
  children.push(fileChip(filename, mimetype, base64Size(base64)));
  return { el: blockEl("binary", children, { "data-mimetype": mimetype }) };
}

/** @type {(block: Block, env: BlockEnv) => BlockView} */
function unknownBlock(block) {
  return {
    el: blockEl("unknown", [
      h("div", { className: "actx-label", text: `block: ${String(block?.type ?? "?")}` }),
      h("pre", { className: "actx-json", text: prettyJson(block) }),
    ]),
  };
}

/** @type {Record<string, (block: Block, env: BlockEnv) => BlockView>} */
export const BLOCK_RENDERERS = { text, thinking, toolCall, image, binary };

/**
 * Build the view of one block; never throws.
 * @param {Block} block
 * @param {BlockEnv} env
 * @param {string} where e.g. "context[3].content[0]"
 * @returns {BlockView}
 */
export function createBlockView(block, env, where) {
  const type = block && typeof block === "object" ? block.type : undefined;
  const render = (typeof type === "string" && Object.hasOwn(BLOCK_RENDERERS, type) && BLOCK_RENDERERS[type]) || unknownBlock;
  try {
    return render(block, env);
  } catch (error) {
    return { el: renderFailure(where, error, block) };
  }
}
