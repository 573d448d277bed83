// The hostile corpus (tests/vectors/xss_payloads.json) through the whole renderer, in every field it draws.
// The browser version (tests/browser/test_hostile_content.py) proves nothing runs in real Chromium;
// this one is the fast check of the DOM the renderer builds, including every streaming prefix.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import { createRenderer } from "../src/render/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const corpus = JSON.parse(readFileSync(join(here, "..", "..", "tests", "vectors", "xss_payloads.json"), "utf8"));
/** @type {string[]} */
const ALL = [...corpus.payloads, ...corpus.urls];

/** @type {Array<{destroy: () => void}>} */
const mounted = [];
afterEach(() => {
  while (mounted.length) mounted.pop()?.destroy();
});

/** @param {any} state */
function mount(state) {
  const el = document.createElement("div");
  document.body.append(el);
  const renderer = createRenderer(el, { pageSize: 100_000 });
  mounted.push(renderer);
  const full = { seq: 1, header: { name: "x", count: 0 }, context: [], pending: null, outputs: { order: [], messages: {} }, ...state };
  renderer.update(full);
  return { root: renderer.root, renderer, state: full };
}

const URL_ATTRS = ["href", "src", "poster", "action", "formaction", "xlink:href", "srcset", "background", "data", "ping", "cite", "lowsrc", "dynsrc"];
const BAD_URL = /^[\s\u0000-\u001f]*(javascript|vbscript|data:text\/html)/i;

/** Every problem under `root`, as readable strings (empty = inert). @param {Element} root */
function problems(root) {
  const found = [];
  for (const el of root.querySelectorAll("script, iframe, object, embed, frame, base, meta, link, style, form, svg, math")) {
    found.push(`<${el.tagName.toLowerCase()}>`);
  }
  for (const el of root.querySelectorAll("*")) {
    for (const attr of Array.from(el.attributes)) {
      const name = attr.name.toLowerCase();
      if (name.startsWith("on")) found.push(`${el.tagName}[${name}]`);
      if (URL_ATTRS.includes(name) && BAD_URL.test(attr.value)) found.push(`${el.tagName}[${name}=${attr.value}]`);
      if (name === "style" && /url\s*\(/i.test(attr.value)) found.push(`${el.tagName}[style=${attr.value}]`);
    }
    // a click-to-load placeholder may only ever load http(s): anything else must be a disabled button
    const parked = el.getAttribute("data-src");
    if (parked !== null && !/^https?:\/\//i.test(parked) && !(el instanceof HTMLButtonElement && el.disabled)) {
      found.push(`${el.tagName}[data-src=${parked}] is clickable`);
    }
  }
  for (const img of root.querySelectorAll(".actx-md img[src]")) {
    const src = img.getAttribute("src") ?? "";
    if (!/^data:image\//i.test(src)) found.push(`Markdown <img src=${src}>`);
  }
  for (const el of root.querySelectorAll(".actx-md [srcset], .actx-md [poster], .actx-md video, .actx-md audio, .actx-md source")) {
    found.push(`Markdown ${el.tagName} fetches`);
  }
  return found;
}

/** @param {string} p */
const argsObject = (p) => ({ [p]: p, list: [p], nested: { html: p } });

/** A context holding every payload in every context field (blocks of one kind never adjacent). */
function hostileContext() {
  return [
    { type: 2, content: ALL.flatMap((p) => [{ type: "text", text: p }, { type: "binary", mimetype: p, filename: p, content: "aGk=" }]) },
    {
      type: 3,
      content: ALL.flatMap((p, i) => [
        { type: "thinking", text: p },
        { type: "text", text: p },
        { type: "toolCall", callId: `call_${i}`, name: p, arguments: p },
        { type: "toolCall", callId: p, name: p, arguments: argsObject(p) },
        { type: "image", url: p, filename: p },
        { type: "image", mimetype: p, content: "aGk=" },
      ]),
    },
    ...ALL.map((p, i) => ({ type: 4, callId: `call_${i}`, content: [{ type: "text", text: p }] })),
    ...ALL.map((p) => ({ type: 4, callId: p, error: true, content: [{ type: "text", text: p }] })),
    ...ALL.map((p) => ({ type: 3, content: [], error: { message: p, retry: p } })),
    ...ALL.map((p) => ({ type: 3, content: [{ type: "text", text: "ok" }], error: p, [p]: p })),
    ...ALL.map((p) => ({ type: p, [p]: p, html: p })),
  ];
}

/** Every payload in every output field. */
function hostileOutputs() {
  /** @type {Record<string, any>} */
  const messages = {};
  /** @type {string[]} */
  const order = [];
  /** @param {string} id @param {string} type @param {any} props @param {any} [extra] */
  const add = (id, type, props, extra = {}) => {
    order.push(id);
    messages[id] = { id, type, props, done: true, ...extra };
  };
  ALL.forEach((p, i) => {
    add(`text-${i}`, "text", { content: p });
    add(`stream-${i}`, "text", { content: p }, { done: false });
    add(`think-${i}`, "thinking", { content: p }, { done: false });
    add(`load-${i}`, "loading", { message: p }, { done: false });
    add(`tool-${i}`, "tool_call", { id: p, name: p, arguments: p });
    add(`toolobj-${i}`, "tool_call", { id: p, name: p, arguments: argsObject(p) });
    add(`err-${i}`, "error", { message: p, code: p, details: p });
    add(`img-${i}`, "image", { url: p, alt: p, width: p, height: p });
    add(`audio-${i}`, "audio", { url: p, transcript: p, format: p });
    add(`video-${i}`, "video", { url: p, thumbnail: p, transcript: p, format: p });
    add(`action-${i}`, "action", { name: p, payload: p });
    add(`event-${i}`, "event", { event: p, data: { html: p } });
    add(`input-${i}`, "user_input", { content: p });
    add(`unknown-${i}`, "x-hostile", { html: p, [p]: p });
    add(p, p, { content: p });
    add(`grp-${i}`, "text", { content: p }, { group_id: p });
  });
  return { order, messages };
}

/** Where a stream may pause inside a payload: after every character that changes how HTML or
 * Markdown parses (every single character would cost minutes in jsdom for the same coverage).
 * @param {string} p */
function cutPoints(p) {
  const cuts = [];
  for (let end = 1; end < p.length; end += 1) if (/[<>"'=\s()[\]`:/!&-]/.test(p[end - 1])) cuts.push(end);
  cuts.push(p.length);
  return cuts;
}

describe("the hostile corpus", () => {
  test("is the corpus the browser test uses", () => {
    expect(corpus.payloads).toHaveLength(69);
    expect(corpus.urls).toHaveLength(8);
  });

  test("every context field, the header and the pending message stay inert", () => {
    const { root } = mount({
      header: { name: ALL.join(" | "), count: 3, model: ALL.join(" "), tokens: 1, window: 10 },
      context: hostileContext(),
      pending: { type: 3, content: ALL.flatMap((p) => [{ type: "text", text: p }, { type: "thinking", text: p }]) },
    });
    expect(problems(root)).toEqual([]);
    expect(root.querySelector("[data-testid=actx-header-name]")?.textContent).toBe(ALL.join(" | "));
    // text fields keep the payload verbatim
    const names = Array.from(root.querySelectorAll(".actx-block-toolCall .actx-tool-name"), (el) => el.textContent);
    expect(names.filter((_, k) => k % 2 === 0)).toEqual(ALL);
    const raw = Array.from(root.querySelectorAll(".actx-block-toolCall .actx-args-raw"), (el) => el.textContent);
    expect(raw).toEqual(ALL);
    const errors = Array.from(root.querySelectorAll("[data-testid=actx-response-error] .actx-error-message"), (el) => el.textContent);
    expect(errors).toEqual([...ALL, ...ALL]);
    const results = Array.from(root.querySelectorAll(".actx-tool-output"), (el) => el.textContent);
    // each call's result is drawn beneath it: call_i's result, then the failed result for callId p
    expect(results).toEqual(ALL.flatMap((p) => [p, p]));
  });

  test("every output field stays inert and text fields keep the payload", () => {
    const outputs = hostileOutputs();
    const { root } = mount({ outputs });
    expect(problems(root)).toEqual([]);
    expect(root.querySelectorAll(".actx-out")).toHaveLength(outputs.order.length);
    ALL.forEach((p, i) => {
      const out = (/** @type {string} */ id) => /** @type {Element} */ (
        Array.from(root.querySelectorAll(".actx-out")).find((el) => el.getAttribute("data-output-id") === id));
      expect(out(`err-${i}`).querySelector(".actx-error-details")?.textContent).toBe(p);
      expect(out(`tool-${i}`).querySelector(".actx-tool-name")?.textContent).toBe(p);
      expect(out(`input-${i}`).textContent).toContain(p);
      expect(out(`load-${i}`).textContent).toBe(p);
      expect(out(p).getAttribute("data-kind")).toBe(p);
      const image = out(`img-${i}`);
      if (p.startsWith("data:image/")) expect(image.querySelector("img")?.getAttribute("src")).toBe(p);
      else expect(image.querySelector("[data-testid=actx-blocked-url]")?.textContent).toContain(p.slice(0, 200));
      expect(out(`audio-${i}`).querySelector("audio")).toBeNull();
      expect(out(`video-${i}`).querySelector("video")).toBeNull();
    });
    const groups = Array.from(root.querySelectorAll(".actx-group"), (el) => el.getAttribute("data-group-id"));
    expect(groups).toEqual(ALL);
  });

  test("every prefix of every payload, streamed into the pending message or an output, stays inert", () => {
    const { renderer, state } = mount({});
    ALL.forEach((p, i) => {
      // alternate the two streaming paths (pending block, output message): both are StreamingMarkdown
      const viaPending = i % 2 === 0;
      for (const end of cutPoints(p)) {
        const text = `intro\n\n${p.slice(0, end)}`;
        if (viaPending) state.pending = { type: 3, content: [{ type: "text", text }] };
        else state.outputs = { order: ["s"], messages: { s: { id: "s", type: "text", props: { content: text }, done: false } } };
        renderer.update(state, viaPending ? { pending: true } : { outputs: ["s"] });
        const found = problems(renderer.root);
        if (found.length) expect({ payload: p, prefix: end, found }).toEqual({});
      }
      state.pending = null;
      state.outputs = { order: [], messages: {} };
      renderer.update(state, { pending: true, outputs: "all" });
    });
  }, 60_000);

  test("a tool result's payload in a linked call, and a merged re-render, stay inert", () => {
    const { renderer, state, root } = mount({ context: hostileContext() });
    // re-render every entry in place (the path a merge or an edit takes)
    renderer.update(state, { context: state.context.map((/** @type {any} */ _m, /** @type {number} */ i) => i) });
    expect(problems(root)).toEqual([]);
    expect(root.querySelectorAll("[data-testid=actx-tool-result]").length).toBe(2 * ALL.length);
  });
});
