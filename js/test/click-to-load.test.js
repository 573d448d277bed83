// One click-to-load placeholder for every remote medium (review of issues 19/21): a context image
// block, a Markdown image, and the image/audio/video outputs (and a video's thumbnail) all show the same
// button and load the same element after the click. These pin what the context image block and the
// Markdown image did before they shared js/src/render/click-to-load.js.
import { afterEach, describe, expect, test } from "vitest";
import { createRenderer } from "../src/render/index.js";

/** @type {Array<{destroy: () => void}>} */
const mounted = [];
afterEach(() => {
  while (mounted.length) mounted.pop()?.destroy();
});

/** @param {any[]} content  the blocks of one user message */
function mountBlocks(content) {
  const el = document.createElement("div");
  document.body.append(el);
  const renderer = createRenderer(el);
  mounted.push(renderer);
  renderer.update({ header: {}, context: [{ type: 1, content }], pending: null, outputs: { order: [], messages: {} } });
  return renderer.root;
}

/** @param {Element} root */
const placeholder = (root) => /** @type {HTMLButtonElement | null} */ (root.querySelector("[data-testid=actx-remote-img]"));

describe("a remote context image block", () => {
  test.each([
    [{ type: "image", url: "https://example.com/cat.png", alt: "a cat" }, "https://example.com/cat.png", "Load image: a cat"],
    [{ type: "image", url: "http://example.com/a.png?q=1", filename: "a.png" }, "http://example.com/a.png?q=1", "Load image: a.png"],
    [{ type: "image", source: { url: "https://example.com/s.png" } }, "https://example.com/s.png", "Load image: https://example.com/s.png"],
  ])("%j waits for a click, then loads the image without a referrer", (block, url, text) => {
    const root = mountBlocks([block]);
    const image = /** @type {HTMLElement} */ (root.querySelector("[data-block=image]"));
    expect(image.querySelector("img, [src]")).toBeNull();
    const button = placeholder(image);
    expect(button?.className).toBe("actx-remote-img");
    expect(button?.type).toBe("button");
    expect(button?.textContent).toBe(text);
    expect(button?.title).toBe(`Load ${url}`);
    expect(button?.getAttribute("data-src")).toBe(url);
    expect(button?.getAttribute("data-kind")).toBe("image"); // as the outputs' placeholders say (new with the shared helper)
    button?.click();
    expect(placeholder(root)).toBeNull();
    const imgs = image.querySelectorAll("img");
    expect(imgs).toHaveLength(1);
    expect(imgs[0].className).toBe("actx-img");
    expect(imgs[0].getAttribute("src")).toBe(url);
    expect(imgs[0].getAttribute("referrerpolicy")).toBe("no-referrer");
    expect(imgs[0].getAttribute("alt")).toBe(text);
  });

  test("an inline (data:) image shows at once; a relative one is a file chip, with nothing to click", () => {
    const root = mountBlocks([
      { type: "image", url: "data:image/png;base64,iVBORw0KGgo=", alt: "dot" },
      { type: "image", url: "/files/secret.png", alt: "secret" },
    ]);
    const [inline, relative] = Array.from(root.querySelectorAll("[data-block=image]"));
    expect(inline.querySelector("img")?.getAttribute("src")).toBe("data:image/png;base64,iVBORw0KGgo=");
    expect(relative.querySelector("[src], [data-src], button")).toBeNull();
    expect(relative.querySelector("[data-testid=actx-file]")?.textContent).toContain("secret");
  });
});

describe("a remote Markdown image", () => {
  test("loads on a click with the button's text as its alt, without a referrer", () => {
    const root = mountBlocks([{ type: "text", text: "![chart](https://example.com/c.png)" }]);
    const button = placeholder(root);
    const text = button?.textContent;
    expect(text).toBe("Load image: chart (example.com)");
    button?.click();
    expect(placeholder(root)).toBeNull();
    const img = root.querySelector(".actx-md img");
    expect(img?.getAttribute("src")).toBe("https://example.com/c.png");
    expect(img?.className).toBe("actx-img");
    expect(img?.getAttribute("alt")).toBe(text);
    expect(img?.getAttribute("referrerpolicy")).toBe("no-referrer");
  });
});

describe("remote outputs", () => {
  test("one placeholder per output, and a click loads one element (the view's own listener adds none)", () => {
    const el = document.createElement("div");
    document.body.append(el);
    const renderer = createRenderer(el);
    mounted.push(renderer);
    const messages = {
      i: { id: "i", type: "image", props: { url: "https://example.com/a.png", alt: "a" }, done: true },
      a: { id: "a", type: "audio", props: { url: "https://example.com/a.mp3" }, done: true },
      v: { id: "v", type: "video", props: { url: "https://example.com/v.mp4", thumbnail: "https://example.com/t.jpg" }, done: true },
    };
    renderer.update({ header: {}, context: [], pending: null, outputs: { order: Object.keys(messages), messages } });
    for (const [id, tag, text] of [["i", "img", "Load image: a"], ["a", "audio", "Load audio: example.com"], ["v", "video", "Load video: example.com"]]) {
      const out = /** @type {HTMLElement} */ (renderer.root.querySelector(`[data-output-id="${id}"]`));
      const button = /** @type {HTMLButtonElement} */ (placeholder(out));
      expect(button.textContent).toBe(text);
      button.click();
      expect(placeholder(out)).toBeNull();
      expect(out.querySelectorAll("img, audio, video")).toHaveLength(1);
      expect(out.querySelector(tag)).not.toBeNull();
    }
    expect(renderer.root.querySelector("video")?.getAttribute("poster")).toBe("https://example.com/t.jpg");
    expect(renderer.root.querySelector("img")?.getAttribute("alt")).toBe("a");
  });
});
