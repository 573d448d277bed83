import { describe, expect, test, vi } from "vitest";
import { BlockScanner, StreamingMarkdown, renderMarkdown } from "../src/render/markdown.js";
import { createRenderer } from "../src/render/index.js";

/** @param {DocumentFragment} fragment */
function html(fragment) {
  const div = document.createElement("div");
  div.append(fragment);
  return div;
}

describe("renderMarkdown", () => {
  test("renders code blocks, tables and lists", () => {
    const div = html(renderMarkdown("# Title\n\n- a\n- b\n\n1. one\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n```js\nlet a = 1;\n```\n"));
    expect(div.querySelector("h1")?.textContent).toBe("Title");
    expect(Array.from(div.querySelectorAll("ul > li")).map((li) => li.textContent)).toEqual(["a", "b"]);
    expect(div.querySelectorAll("ol > li")).toHaveLength(1);
    expect(Array.from(div.querySelectorAll("td")).map((td) => td.textContent)).toEqual(["1", "2"]);
    const code = div.querySelector("pre > code");
    expect(code?.className).toBe("language-js");
    expect(code?.textContent).toBe("let a = 1;\n");
  });

  test("task lists show their boxes as characters (no <input>)", () => {
    const div = html(renderMarkdown("- [x] done\n- [ ] todo\n"));
    expect(div.querySelector("input")).toBeNull();
    expect(Array.from(div.querySelectorAll("li")).map((li) => li.textContent?.trim())).toEqual(["☑ done", "☐ todo"]);
  });

  test("links open in a new tab without referrer", () => {
    const a = html(renderMarkdown("[docs](https://example.com/d)")).querySelector("a");
    expect(a?.getAttribute("href")).toBe("https://example.com/d");
    expect(a?.getAttribute("target")).toBe("_blank");
    expect(a?.getAttribute("rel")).toContain("noopener");
  });
});

describe("BlockScanner", () => {
  /** @param {string} text */
  const boundaryOf = (text) => {
    const scanner = new BlockScanner();
    scanner.feed(text);
    return scanner.boundary;
  };

  test("a blank line followed by an unindented line is a boundary", () => {
    expect(boundaryOf("para one\n\npara two\n")).toBe("para one\n\n".length);
  });

  test("an indented continuation after a blank line is not a boundary", () => {
    expect(boundaryOf("- item\n\n  more of the item\n")).toBe(0);
  });

  test("blank lines inside a code fence are not boundaries", () => {
    const text = "intro\n\n```\ncode\n\nstill code\n";
    // boundary at the fence opener (a fence interrupts a paragraph); none inside the fence
    expect(boundaryOf(text)).toBe("intro\n\n".length);
  });

  test("the line after a closing fence is a boundary", () => {
    const text = "```\na\n\nb\n```\nafter\n";
    expect(boundaryOf(text)).toBe("```\na\n\nb\n```\n".length);
  });

  test("a line not yet ended starts a block when it follows a blank line unindented", () => {
    expect(boundaryOf("one\n\ntw")).toBe(5);
    expect(boundaryOf("- one\n\n  tw")).toBe(0);
    expect(boundaryOf("one\n")).toBe(0);
  });

  test("a longer closing fence closes; a shorter one does not", () => {
    const scanner = new BlockScanner();
    scanner.feed("````\n```\n");
    expect(scanner.fence).not.toBeNull();
    scanner.feed("````\n```\n`````\n");
    expect(scanner.fence).toBeNull();
  });
});

describe("StreamingMarkdown", () => {
  test("finished blocks keep their DOM nodes while the tail grows", () => {
    const md = new StreamingMarkdown();
    md.update("First paragraph.\n\nSecond", true);
    const firstP = md.el.querySelector(".actx-md-chunk p");
    expect(firstP?.textContent).toBe("First paragraph.");
    expect(md.el.querySelector(".actx-md-tail")?.textContent).toBe("Second\n");

    md.update("First paragraph.\n\nSecond paragraph.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nThird", true);
    const chunks = md.el.querySelectorAll(".actx-md-chunk");
    expect(chunks).toHaveLength(2);
    expect(md.el.querySelector(".actx-md-chunk p")).toBe(firstP); // same node, not re-rendered
    const table = md.el.querySelector("table");
    expect(md.el.querySelector(".actx-md-tail")?.textContent).toBe("Third\n");

    md.update("First paragraph.\n\nSecond paragraph.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nThird and last.", false);
    expect(md.el.querySelector(".actx-md-chunk p")).toBe(firstP);
    expect(md.el.querySelector("table")).toBe(table);
    expect(md.el.querySelector(".actx-md-tail p")?.textContent).toBe("Third and last.");
    expect(md.el.classList.contains("actx-streaming")).toBe(false);
  });

  test("the streamed result matches a one-shot render", () => {
    const text = "# H\n\nSome *text*.\n\n- a\n- b\n\n```py\nx = 1\n\ny = 2\n```\nAfter the fence.\n\n> quote\n";
    const streamed = new StreamingMarkdown();
    for (let i = 1; i <= text.length; i += 3) streamed.update(text.slice(0, i), true);
    streamed.update(text, false);
    const oneShot = new StreamingMarkdown();
    oneShot.update(text, false);
    const visible = (/** @type {HTMLElement} */ el) => Array.from(el.querySelectorAll("h1, p, li, pre, blockquote")).map((n) => `${n.tagName}:${n.textContent}`);
    expect(visible(streamed.el)).toEqual(visible(oneShot.el));
    expect(streamed.el.querySelector("pre code")?.textContent).toBe("x = 1\n\ny = 2\n");
  });

  test("an open code fence grows by appending to one text node", () => {
    const md = new StreamingMarkdown();
    md.update("Intro:\n```python\nprint(1)\n", true);
    const code = md.el.querySelector(".actx-md-tail pre code");
    expect(code?.className).toBe("language-python");
    expect(code?.textContent).toBe("print(1)\n");
    const textNode = code?.firstChild;
    md.update("Intro:\n```python\nprint(1)\n\nprint(2)", true);
    expect(md.el.querySelector(".actx-md-tail pre code")).toBe(code);
    expect(code?.firstChild).toBe(textNode);
    expect(code?.textContent).toBe("print(1)\n\nprint(2)");
  });

  test("a text that is not an extension of the last one is re-rendered from scratch", () => {
    const md = new StreamingMarkdown();
    md.update("alpha\n\nbeta", false);
    md.update("gamma", false);
    expect(md.el.querySelectorAll(".actx-md-chunk")).toHaveLength(0);
    expect(md.el.textContent?.trim()).toBe("gamma");
  });

  test("a 500 KB stream is parsed in bounded pieces", () => {
    const md = new StreamingMarkdown();
    let text = "";
    let parsedChars = 0;
    const paragraph = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(90) + "\n\n";
    while (text.length < 500_000) {
      text += paragraph;
      md.update(text, true);
      parsedChars += text.length - md.committed; // what the tail re-parse costs this update
    }
    // Each update re-parses only the tail (about one paragraph), never the whole text.
    expect(parsedChars / (text.length / paragraph.length)).toBeLessThanOrEqual(paragraph.length);
    // every paragraph but the last is finished (the last one could still be continued)
    const paragraphs = text.length / paragraph.length;
    expect(md.el.querySelectorAll(".actx-md-chunk p").length).toBe(paragraphs - 1);
    expect(md.el.querySelectorAll(".actx-md-tail p").length).toBe(1);
  });

  test("a huge block that keeps growing is re-parsed only after it grew by a tenth; the final text always shows", () => {
    const md = new StreamingMarkdown();
    const row = "| cell | another cell | third |\n";
    let text = "| a | b | c |\n|---|---|---|\n";
    while (text.length < 100_000) text += row; // one table: no block boundary anywhere
    md.update(text, true);
    const table = md.el.querySelector(".actx-md-tail table");
    const rows = table?.querySelectorAll("tr").length ?? 0;
    md.update(text + row, true); // +0.03 %: not re-parsed yet
    expect(md.el.querySelector(".actx-md-tail table")).toBe(table);
    expect(md.el.querySelectorAll(".actx-md-tail tr")).toHaveLength(rows);
    md.update(text + row + row, false); // the final text is always rendered
    expect(md.el.querySelectorAll(".actx-md-tail tr")).toHaveLength(rows + 2);
  });
});

describe("a huge block that stops growing while still open", () => {
  test("catches up with the last text once the stream is quiet", () => {
    vi.useFakeTimers();
    try {
      const md = new StreamingMarkdown();
      // One block of ~100 KB: a table has no blank line, so it never splits.
      let text = "| a | b |\n|---|---|\n";
      while (text.length < 100 * 1024) text += "| x | y |\n";
      md.update(text, true);
      const rowsBefore = md.el.querySelectorAll("tr").length;
      text += "| LAST | ROW |\n";
      md.update(text, true); // grew by far less than a tenth: the re-parse is deferred
      expect(md.el.textContent).not.toContain("LAST");
      vi.advanceTimersByTime(1000);
      expect(md.el.textContent).toContain("LAST");
      expect(md.el.querySelectorAll("tr").length).toBe(rowsBefore + 1);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("destroy cancels the catch-up timer", () => {
  test("a big open block's pending catch-up never fires into a destroyed renderer", async () => {
    vi.useFakeTimers();
    try {
      const el = document.createElement("div");
      document.body.append(el);
      const renderer = createRenderer(el);
      const big = "x".repeat(70 * 1024); // one block over BIG_TAIL, still growing
      const state = (text, done) => ({ header: {}, context: [], pending: null,
        outputs: { order: ["m"], messages: { m: { id: "m", type: "text", props: { content: text }, done } } } });
      renderer.update(state(big, false), { outputs: "all" });
      const beforeDeferral = vi.getTimerCount(); // the scroll-follow frame
      renderer.update(state(big + "y", false), { outputs: ["m"] }); // grew by little: re-parse deferred
      expect(vi.getTimerCount()).toBe(beforeDeferral + 1); // + the catch-up timer
      renderer.destroy();
      expect(vi.getTimerCount()).toBe(beforeDeferral); // the catch-up timer is cancelled
    } finally {
      vi.useRealTimers();
    }
  });
});
