import { afterEach, describe, expect, test } from "vitest";
import { createRenderer } from "../src/render/index.js";

/** @type {Array<{destroy: () => void}>} */
const mounted = [];
afterEach(() => {
  while (mounted.length) mounted.pop()?.destroy();
});

function mount() {
  const el = document.createElement("div");
  document.body.append(el);
  const renderer = createRenderer(el);
  mounted.push(renderer);
  return renderer;
}

/** @param {any[]} messages */
function outputs(messages) {
  return {
    order: messages.map((m) => m.id),
    messages: Object.fromEntries(messages.map((m) => [m.id, { done: false, ...m }])),
  };
}

/** @param {any} outs */
const state = (outs) => ({ header: {}, context: [], pending: null, outputs: outs });

/** @param {any} renderer @param {string} id */
const out = (renderer, id) => /** @type {HTMLElement} */ (renderer.root.querySelector(`[data-output-id="${id}"]`));

describe("output message types", () => {
  test("user_input shows the text", () => {
    const r = mount();
    r.update(state(outputs([{ id: "u", type: "user_input", props: { content: "<b>hi</b>" } }])));
    expect(out(r, "u").getAttribute("data-kind")).toBe("user_input");
    expect(out(r, "u").querySelector(".actx-plain")?.textContent).toBe("<b>hi</b>");
    expect(out(r, "u").querySelector("b")).toBeNull();
  });

  test("text is Markdown and streams in place", () => {
    const r = mount();
    r.update(state(outputs([{ id: "t", type: "text", props: { content: "Processing\n\n**one**" } }])));
    const md = out(r, "t").querySelector(".actx-md");
    const firstP = md?.querySelector(".actx-md-chunk p");
    expect(firstP?.textContent).toBe("Processing");
    r.update(state(outputs([{ id: "t", type: "text", props: { content: "Processing\n\n**one** two" }, done: true }])), { outputs: ["t"] });
    expect(out(r, "t").querySelector(".actx-md")).toBe(md);
    expect(md?.querySelector(".actx-md-chunk p")).toBe(firstP);
    expect(md?.querySelector(".actx-md-tail")?.textContent?.trim()).toBe("one two");
    expect(out(r, "t").getAttribute("data-done")).toBe("true");
  });

  test("thinking is collapsible, open until done", () => {
    const r = mount();
    r.update(state(outputs([{ id: "th", type: "thinking", props: { content: "Analyzing..." } }])));
    const details = /** @type {HTMLDetailsElement} */ (out(r, "th").querySelector("details"));
    expect(details.open).toBe(true);
    expect(details.querySelector(".actx-md")?.textContent?.trim()).toBe("Analyzing...");
    expect(details.querySelector("summary")?.textContent).toBe("Thinking…");
    r.update(state(outputs([{ id: "th", type: "thinking", props: { content: "Analyzing... done" }, done: true }])), { outputs: ["th"] });
    expect(out(r, "th").querySelector("details")).toBe(details);
    expect(details.querySelector("summary")?.textContent).toBe("Thinking");
    expect(details.querySelector(".actx-md")?.textContent?.trim()).toBe("Analyzing... done");
  });

  test("loading shows a spinner and message; hidden when done or empty", () => {
    const r = mount();
    r.update(state(outputs([{ id: "l", type: "loading", props: { message: "Searching..." } }])));
    expect(out(r, "l").hidden).toBe(false);
    expect(out(r, "l").querySelector(".actx-spinner")).not.toBeNull();
    expect(out(r, "l").querySelector(".actx-loading-text")?.textContent).toBe("Searching...");
    r.update(state(outputs([{ id: "l", type: "loading", props: { message: "" } }])), { outputs: ["l"] });
    expect(out(r, "l").hidden).toBe(true);
    r.update(state(outputs([{ id: "l", type: "loading", props: { message: "again" } }])), { outputs: ["l"] });
    expect(out(r, "l").hidden).toBe(false);
    r.update(state(outputs([{ id: "l", type: "loading", props: { message: "again" }, done: true }])), { outputs: ["l"] });
    expect(out(r, "l").hidden).toBe(true);
  });

  test("tool_call shows id, name and arguments (parsed JSON string pretty-printed, else raw)", () => {
    const r = mount();
    r.update(state(outputs([
      { id: "a", type: "tool_call", props: { id: "call_123", name: "function_name", arguments: '{"key": "value"}' } },
      { id: "b", type: "tool_call", props: { id: "call_124", name: "f", arguments: '{"key": "va' } },
    ])));
    expect(out(r, "a").querySelector(".actx-call-id")?.textContent).toBe("call_123");
    expect(out(r, "a").querySelector(".actx-tool-name")?.textContent).toBe("function_name");
    expect(out(r, "a").querySelector(".actx-args")?.textContent).toBe('{\n  "key": "value"\n}');
    expect(out(r, "b").querySelector(".actx-args")?.textContent).toBe('{"key": "va');
  });

  test("error shows message, code and details", () => {
    const r = mount();
    r.update(state(outputs([{ id: "e", type: "error", props: { message: "Something went wrong", code: "ERR_500", details: "Additional details" } }])));
    expect(out(r, "e").querySelector(".actx-error-message")?.textContent).toBe("Something went wrong");
    expect(out(r, "e").querySelector(".actx-error-code")?.textContent).toBe("ERR_500");
    expect(out(r, "e").querySelector(".actx-error-details")?.textContent).toBe("Additional details");
  });

  test("image uses url, alt, width and height", () => {
    const r = mount();
    const url = "data:image/png;base64,iVBORw0KGgo=";
    r.update(state(outputs([{ id: "i", type: "image", props: { url, alt: "Image description", width: 800, height: 600 } }])));
    const img = out(r, "i").querySelector("img");
    expect(img?.getAttribute("src")).toBe(url);
    expect(img?.getAttribute("alt")).toBe("Image description");
    expect(img?.getAttribute("width")).toBe("800");
    expect(img?.getAttribute("height")).toBe("600");
  });

  test("a remote image is fetched only on a click (issue 21: no beacon in a reopened notebook)", () => {
    const r = mount();
    r.update(state(outputs([{ id: "i", type: "image", props: { url: "https://example.com/image.jpg", alt: "cat" } }])));
    expect(out(r, "i").querySelector("img")).toBeNull();
    const button = /** @type {HTMLElement} */ (out(r, "i").querySelector("[data-testid=actx-remote-img]"));
    expect(button.getAttribute("data-src")).toBe("https://example.com/image.jpg");
    expect(out(r, "i").querySelector("figcaption")?.textContent).toBe("cat");
    expect(button.textContent).toBe("Load image: cat");
    button.click();
    const img = out(r, "i").querySelector("img");
    expect(img?.getAttribute("src")).toBe("https://example.com/image.jpg");
    expect(img?.getAttribute("referrerpolicy")).toBe("no-referrer");
    expect(out(r, "i").querySelectorAll("img, button")).toHaveLength(1);
  });

  test("audio: a remote one waits for a click, then plays with controls; format, duration and transcript shown at once", () => {
    const r = mount();
    r.update(state(outputs([{ id: "a", type: "audio", props: { url: "https://example.com/audio.mp3", format: "mp3", duration: 120.5, transcript: "Audio transcript...", autoplay: false, controls: true } }])));
    expect(out(r, "a").querySelector("audio")).toBeNull();
    expect(out(r, "a").querySelector("[src], [poster]")).toBeNull();
    expect(out(r, "a").querySelector(".actx-media-facts")?.textContent).toBe("mp3 · 120.5 s");
    expect(out(r, "a").querySelector(".actx-transcript")?.textContent).toContain("Audio transcript...");
    const button = /** @type {HTMLButtonElement} */ (out(r, "a").querySelector("[data-testid=actx-remote-img]"));
    expect(button.getAttribute("data-kind")).toBe("audio");
    expect(button.textContent).toBe("Load audio: example.com");
    button.click();
    const audio = /** @type {HTMLAudioElement} */ (out(r, "a").querySelector("audio"));
    expect(audio.getAttribute("src")).toBe("https://example.com/audio.mp3");
    expect(audio.hasAttribute("controls")).toBe(true);
    expect(audio.hasAttribute("autoplay")).toBe(false);
    expect(out(r, "a").querySelector("img, [data-testid=actx-remote-img]")).toBeNull();
  });

  test("video: nothing fetched before the click (no src, no poster); the click makes the player with thumbnail, size, autoplay and controls", () => {
    const r = mount();
    r.update(state(outputs([{ id: "v", type: "video", props: { url: "https://example.com/video.mp4", format: "mp4", thumbnail: "https://example.com/thumb.jpg", width: 1920, height: 1080, autoplay: true, controls: false } }])));
    expect(out(r, "v").querySelector("video, img, [src], [poster]")).toBeNull();
    const button = /** @type {HTMLButtonElement} */ (out(r, "v").querySelector("[data-testid=actx-remote-img]"));
    expect(button.textContent).toBe("Load video: example.com");
    expect(button.title).toBe("Load https://example.com/video.mp4 and https://example.com/thumb.jpg");
    button.click();
    const video = /** @type {HTMLVideoElement} */ (out(r, "v").querySelector("video"));
    expect(video.getAttribute("src")).toBe("https://example.com/video.mp4");
    expect(video.getAttribute("poster")).toBe("https://example.com/thumb.jpg");
    expect(video.getAttribute("width")).toBe("1920");
    expect(video.hasAttribute("autoplay")).toBe(true);
    expect(video.hasAttribute("controls")).toBe(false);
    // the view's Markdown-image loader left it alone: one player, no <img> of the video's URL
    expect(out(r, "v").querySelectorAll("video, img, button")).toHaveLength(1);
  });

  test("a local video (data:) with a remote thumbnail waits for a click too; with a data: thumbnail it plays at once", () => {
    const r = mount();
    const url = "data:video/mp4;base64,AAAA";
    r.update(state(outputs([
      { id: "remote-thumb", type: "video", props: { url, thumbnail: "http://example.com/t.jpg" } },
      { id: "local-thumb", type: "video", props: { url, thumbnail: "data:image/png;base64,iVBORw0KGgo=" } },
    ])));
    expect(out(r, "remote-thumb").querySelector("video, [poster]")).toBeNull();
    const button = /** @type {HTMLElement} */ (out(r, "remote-thumb").querySelector("[data-testid=actx-remote-img]"));
    expect(button.getAttribute("data-src")).toBe("http://example.com/t.jpg");
    expect(button.title).toBe("Load http://example.com/t.jpg");
    button.click();
    expect(out(r, "remote-thumb").querySelector("video")?.getAttribute("poster")).toBe("http://example.com/t.jpg");
    const local = out(r, "local-thumb").querySelector("video");
    expect(local?.getAttribute("src")).toBe(url);
    expect(local?.getAttribute("poster")).toBe("data:image/png;base64,iVBORw0KGgo=");
  });

  test("action and event are small chips", () => {
    const r = mount();
    r.update(state(outputs([
      { id: "a", type: "action", props: { name: "open_panel" } },
      { id: "e", type: "event", props: { event: "turn_done" } },
    ])));
    expect(out(r, "a").querySelector(".actx-chip-kind")?.textContent).toBe("action");
    expect(out(r, "a").querySelector(".actx-chip-text")?.textContent).toBe("open_panel");
    expect(out(r, "e").querySelector(".actx-chip-text")?.textContent).toBe("turn_done");
  });

  test("an unknown type is shown as generic JSON", () => {
    const r = mount();
    r.update(state(outputs([{ id: "x", type: "chart", props: { values: [1, 2] } }])));
    expect(out(r, "x").querySelector(".actx-label")?.textContent).toBe("chart");
    expect(JSON.parse(out(r, "x").querySelector("pre")?.textContent ?? "")).toEqual({ values: [1, 2] });
  });
});

describe("output list", () => {
  test("messages sharing a group_id sit in one group box at the first one's place", () => {
    const r = mount();
    r.update(state(outputs([
      { id: "a", type: "text", props: { content: "before" } },
      { id: "g1", type: "text", props: { content: "first" }, group_id: "grp" },
      { id: "b", type: "text", props: { content: "between" } },
      { id: "g2", type: "text", props: { content: "second" }, group_id: "grp" },
    ])));
    const top = Array.from(r.root.querySelectorAll("[data-testid=actx-outputs] > *")).map((el) => el.getAttribute("data-output-id") ?? `group:${el.getAttribute("data-group-id")}`);
    expect(top).toEqual(["a", "group:grp", "b"]);
    const inGroup = Array.from(r.root.querySelectorAll("[data-group-id=grp] [data-output-id]")).map((el) => el.getAttribute("data-output-id"));
    expect(inGroup).toEqual(["g1", "g2"]);
  });

  test("new ids append; a type change rebuilds; a vanished id is removed; clear empties", () => {
    const r = mount();
    const first = [{ id: "a", type: "text", props: { content: "x" } }];
    r.update(state(outputs(first)));
    r.update(state(outputs([...first, { id: "g", type: "text", props: { content: "y" }, group_id: "G" }])), { outputs: ["g"] });
    expect(Array.from(r.root.querySelectorAll("[data-output-id]")).map((el) => el.getAttribute("data-output-id"))).toEqual(["a", "g"]);
    r.update(state(outputs([{ id: "a", type: "error", props: { message: "now an error" } }, { id: "g", type: "text", props: { content: "y" }, group_id: "G" }])), { outputs: ["a"] });
    expect(out(r, "a").getAttribute("data-kind")).toBe("error");
    expect(Array.from(r.root.querySelectorAll("[data-output-id]")).map((el) => el.getAttribute("data-output-id"))).toEqual(["a", "g"]);
    r.update(state(outputs([{ id: "a", type: "error", props: { message: "now an error" } }])), { outputs: ["g"] });
    expect(r.root.querySelector("[data-group-id=G]")).toBeNull();
    r.update(state({ order: [], messages: {} }), { outputs: "all" });
    expect(r.root.querySelectorAll("[data-output-id]")).toHaveLength(0);
    expect(/** @type {HTMLElement} */ (r.root.querySelector(".actx-outputs")).hidden).toBe(true);
  });

  test("props that are not an object do not break the view", () => {
    const r = mount();
    r.update(state(outputs([{ id: "n", type: "text", props: null }, { id: "ok", type: "text", props: { content: "fine" } }])));
    expect(out(r, "ok").textContent?.trim()).toBe("fine");
    expect(out(r, "n")).not.toBeNull();
  });
});
