/**
 * One renderer per output message type (seed 000 "Message Props by Type"), behind a lookup table;
 * unknown types get a generic JSON view. A renderer returns `{el, update?(message): boolean}`.
 *
 * Media types load their URL only when `tryMediaUrl` allows it (http(s), blob:, data: of their own
 * kind); otherwise the URL is shown as text. An http(s) one — a video's thumbnail too — is a
 * click-to-load button (click-to-load.js) until the reader clicks.
 */
import { thinkingBox, toolCallParts } from "./blocks.js";
import { anyRemote, clickToLoad } from "./click-to-load.js";
import { clip, h, prettyJson } from "./dom.js";
import { StreamingMarkdown } from "./markdown.js";
import { isRemoteUrl, tryMediaUrl } from "./urls.js";

/**
 * @typedef {{id: string, type: string, props: Record<string, any>, done?: boolean, group_id?: string, metadata?: any}} OutputMessage
 * @typedef {{el: HTMLElement, update?: (message: OutputMessage) => boolean}} OutputView
 */

/** @param {unknown} value */
const str = (value) => (value === undefined || value === null ? "" : typeof value === "string" ? value : prettyJson(value));

/** @param {unknown} value */
const positive = (value) => (typeof value === "number" && Number.isFinite(value) && value > 0 ? String(Math.round(value)) : null);

/** @param {OutputMessage} message @returns {OutputView} */
function text(message) {
  const md = new StreamingMarkdown();
  md.update(str(message.props.content), !message.done);
  return { el: md.el, update: (next) => (md.update(str(next.props.content), !next.done), true) };
}

/** @param {OutputMessage} message @returns {OutputView} */
function thinking(message) {
  const box = thinkingBox(str(message.props.content), !message.done);
  return { el: box.el, update: (next) => (box.update(str(next.props.content), !next.done), true) };
}

/** @param {OutputMessage} message */
function userInput(message) {
  const props = message.props;
  const content = props.content ?? props.text ?? props.message ?? props.value;
  return {
    el: h("div", { className: "actx-user-input" }, [
      h("span", { className: "actx-label", text: "User input" }),
      typeof content === "string" ? h("div", { className: "actx-plain", text: content }) : h("pre", { className: "actx-json", text: prettyJson(props) }),
    ]),
  };
}

/** @param {OutputMessage} message */
function loading(message) {
  const text = h("span", { className: "actx-loading-text" });
  const el = h("div", { className: "actx-loading", role: "status" }, [h("span", { className: "actx-spinner", "aria-hidden": "true" }), text]);
  /** @param {OutputMessage} msg */
  const show = (msg) => {
    const words = str(msg.props.message);
    text.textContent = words;
    el.hidden = Boolean(msg.done) || words === "";
    el.classList.toggle("actx-loading-done", el.hidden);
  };
  show(message);
  return { el, update: (/** @type {OutputMessage} */ next) => (show(next), true) };
}

/** @param {OutputMessage} message */
function toolCall(message) {
  const { id, name } = message.props;
  let args = message.props.arguments;
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {
      // stays the raw string (still streaming, or not JSON)
    }
  }
  return {
    el: h("div", { className: "actx-tool-call", "data-call-id": typeof id === "string" ? id : null },
      toolCallParts(str(name) || "(unnamed tool)", id === undefined ? null : str(id), args)),
  };
}

/** @param {OutputMessage} message */
function error(message) {
  const { message: text, code, details } = message.props;
  return {
    el: h("div", { className: "actx-error", role: "alert" }, [
      h("div", {}, [
        code === undefined || code === null ? null : h("span", { className: "actx-error-code", text: str(code) }),
        h("span", { className: "actx-error-message", text: str(text) || "Error" }),
      ]),
      details === undefined || details === null || details === "" ? null : h("pre", { className: "actx-error-details", text: str(details) }),
    ]),
  };
}

/** @param {unknown} url */
function blocked(url) {
  return h("div", { className: "actx-blocked-url", "data-testid": "actx-blocked-url" }, [
    h("span", { className: "actx-label", text: "Not loaded (URL not allowed): " }),
    h("code", { text: clip(str(url), 300) }),
  ]);
}

/** @param {OutputMessage} message */
function image(message) {
  const { url, alt, width, height } = message.props;
  const src = tryMediaUrl(url, "image");
  if (!src) return { el: h("figure", { className: "actx-figure" }, [blocked(url)]) };
  const img = () => h("img", {
    className: "actx-img", src, alt: str(alt), width: positive(width), height: positive(height), loading: "lazy",
    referrerpolicy: isRemoteUrl(src) ? "no-referrer" : null,
  });
  return {
    el: h("figure", { className: "actx-figure" }, [
      // a remote image waits for a click, as a model-written one does (a saved view reopened later
      // fetches nothing by itself: a hook could plant a beacon in a notebook)
      isRemoteUrl(src) ? clickToLoad("image", [src], str(alt), img) : img(),
      alt ? h("figcaption", { text: str(alt) }) : null,
    ]),
  };
}

/**
 * A player for `kind`; remote (http(s)) sources and a remote video thumbnail wait for a click, so
 * nothing is fetched before it (the element does not exist until then).
 * @param {"audio" | "video"} kind
 */
function media(kind) {
  /** @type {(message: OutputMessage) => OutputView} */
  return (message) => {
    const p = message.props;
    const src = tryMediaUrl(p.url, kind);
    const poster = kind === "video" ? tryMediaUrl(p.thumbnail, "image") : null;
    const facts = [p.format ? str(p.format) : "", typeof p.duration === "number" ? `${p.duration.toFixed(1)} s` : ""].filter(Boolean).join(" · ");
    const player = () => h(kind, {
      className: `actx-${kind}`,
      src,
      controls: p.controls !== false,
      autoplay: p.autoplay === true,
      preload: "metadata",
      poster,
      width: kind === "video" ? positive(p.width) : null,
      height: kind === "video" ? positive(p.height) : null,
    });
    const body = !src ? blocked(p.url) : anyRemote([src, poster]) ? clickToLoad(kind, [src, poster], "", player) : player();
    return {
      el: h("figure", { className: "actx-figure" }, [
        body,
        facts ? h("figcaption", { className: "actx-media-facts", text: facts }) : null,
        p.transcript ? h("details", { className: "actx-transcript" }, [h("summary", { text: "Transcript" }), h("div", { className: "actx-plain", text: str(p.transcript) })]) : null,
      ]),
    };
  };
}

/** Small chips for `action` and `event`. @param {"action" | "event"} kind */
function chip(kind) {
  /** @type {(message: OutputMessage) => OutputView} */
  return (message) => {
    const p = message.props ?? {};
    const name = [p.name, p.action, p.event, p.type, p.message].find((v) => typeof v === "string" && v);
    const json = prettyJson(p);
    return {
      el: h("span", { className: `actx-chip actx-chip-${kind}`, title: clip(json, 2000) }, [
        h("span", { className: "actx-chip-kind", text: kind }),
        h("span", { className: "actx-chip-text", text: clip(name ?? JSON.stringify(p) ?? "", 80) }),
      ]),
    };
  };
}

/** @param {OutputMessage} message */
export function genericOutput(message) {
  return {
    el: h("div", { className: "actx-generic" }, [
      h("span", { className: "actx-label", text: `${str(message.type) || "message"}` }),
      h("pre", { className: "actx-json", text: prettyJson(message.props) }),
    ]),
  };
}

/** @type {Record<string, (message: OutputMessage) => OutputView>} */
export const OUTPUT_RENDERERS = {
  user_input: userInput,
  text,
  thinking,
  loading,
  tool_call: toolCall,
  error,
  image,
  audio: media("audio"),
  video: media("video"),
  action: chip("action"),
  event: chip("event"),
};
