import { describe, expect, test } from "vitest";
import { SPLIT_PIECE, SPLIT_TAIL, StreamingMarkdown, renderMarkdown } from "../src/render/markdown.js";
import { SoftSplitter } from "../src/render/soft-split.js";

/** Words "0000 0001 …" (base 36, 5 characters each) until `size` characters. @param {number} size */
function words(size) {
  let text = "";
  for (let i = 0; text.length < size; i += 1) text += `${i.toString(36).padStart(4, "0")} `;
  return text;
}

/** Feed `text` to a streaming view in steps of `step` characters, as a stream would. */
function stream(text, step = 3000) {
  const md = new StreamingMarkdown();
  for (let end = step; end < text.length + step; end += step) md.update(text.slice(0, end), true);
  md.update(text, false);
  return md;
}

/** @param {string} markdown */
function rendered(markdown) {
  const div = document.createElement("div");
  div.append(renderMarkdown(markdown));
  return div;
}

describe("SoftSplitter", () => {
  test("cuts a plain paragraph before a word once the piece is long enough", () => {
    const text = words(200);
    const cut = new SoftSplitter(0).find(text, 50, text.length);
    expect(cut).toBe(50); // "0000 " × 10: position 50 starts the word "000a"
    expect(text.slice(cut, cut + 4)).toBe("000a");
  });

  test("never cuts while a delimiter is open, and cuts after it closes", () => {
    const text = `*open ${words(200)}close* ${words(200)}`;
    const close = text.indexOf("close*") + "close* ".length;
    const cut = new SoftSplitter(0).find(text, 50, text.length);
    expect(cut).toBe(close);
  });

  test.each([
    ["a list item", `- ${words(300)}`],
    ["an ordered list item", `12. ${words(300)}`],
    ["a quote", `> ${words(300)}`],
    ["a heading", `# ${words(300)}`],
    ["an indented line", `    ${words(300)}`],
    ["a table row", `| a | b |\n|---|---|\n| ${words(300)} |`],
    ["a paragraph followed by a list", `${words(40)}\n- ${words(300)}`],
  ])("finds no cut in %s", (_name, text) => {
    expect(new SoftSplitter(0).find(text, 50, text.length)).toBe(-1);
  });

  test("a line starting with a number that is not a list item is plain", () => {
    const text = `2024 was a year. ${words(200)}`;
    expect(new SoftSplitter(0).find(text, 50, text.length)).toBeGreaterThan(0);
  });

  test("waits for a line whose start is not written yet, then decides", () => {
    const splitter = new SoftSplitter(0);
    const head = `${words(100)}\n1`;
    expect(splitter.find(head, 10_000, head.length)).toBe(-1);
    const more = `${head}. a list item now ${words(200)}`;
    expect(splitter.find(more, 50, more.length)).toBe(-1); // the paragraph ended: a list began
    const splitter2 = new SoftSplitter(0);
    expect(splitter2.find(head, 10_000, head.length)).toBe(-1);
    const plain = `${head}999 apples ${words(200)}`;
    expect(splitter2.find(plain, 150, plain.length)).toBeGreaterThan(head.length);
  });
});

describe("StreamingMarkdown: a very long paragraph", () => {
  test("is committed in soft pieces whose text is the source, exactly", () => {
    const text = words(100_000);
    const md = stream(text);
    const chunks = md.el.querySelectorAll(".actx-md-chunk");
    expect(chunks.length).toBeGreaterThanOrEqual(Math.floor((100_000 - SPLIT_TAIL) / (SPLIT_TAIL - SPLIT_PIECE)));
    for (const chunk of chunks) {
      expect(chunk.classList.contains("actx-md-soft")).toBe(true);
      expect(chunk.querySelectorAll("p")).toHaveLength(1);
    }
    expect(chunks[0].classList.contains("actx-md-cont")).toBe(false);
    expect(Array.from(chunks).slice(1).every((c) => c.classList.contains("actx-md-cont"))).toBe(true);
    expect(md.tail.classList.contains("actx-md-cont")).toBe(true);
    expect(md.text.length - md.committed).toBeLessThanOrEqual(SPLIT_TAIL);
    // every word of the source, in order, with the spaces between pieces kept
    expect(md.el.textContent?.trimEnd()).toBe(text.trimEnd());
  });

  test("keeps an emphasis that spans what would be a cut in one element", () => {
    const text = `${words(10_000)}*start ${words(40_000)}end* ${words(20_000)}`;
    const md = stream(text);
    const ems = md.el.querySelectorAll("em");
    expect(ems).toHaveLength(1);
    expect(ems[0].textContent?.startsWith("start ")).toBe(true);
    expect(ems[0].textContent?.endsWith(" end")).toBe(true);
  });

  test("a long list item is never cut (it renders as the whole text does)", () => {
    const text = `- ${words(60_000)}`;
    const md = stream(text);
    expect(md.el.querySelectorAll(".actx-md-soft")).toHaveLength(0);
    expect(md.el.querySelectorAll("li")).toHaveLength(1);
    expect(md.el.textContent?.trim()).toBe(rendered(text).textContent?.trim());
  });

  test("a real block boundary after soft pieces starts a fresh paragraph", () => {
    const text = `${words(60_000)}\n\nNext paragraph.\n\nLast.`;
    const md = stream(text);
    const paragraphs = Array.from(md.el.querySelectorAll("p")).map((p) => p.textContent);
    expect(paragraphs.slice(-2)).toEqual(["Next paragraph.", "Last."]);
    expect(md.tail.classList.contains("actx-md-cont")).toBe(false);
  });

  test("a text that is replaced (not extended) starts over without soft pieces", () => {
    const md = stream(words(60_000));
    md.update("Short *new* text.", false);
    expect(md.el.querySelectorAll(".actx-md-chunk")).toHaveLength(0);
    expect(md.tail.classList.contains("actx-md-cont")).toBe(false);
    expect(md.el.querySelector("em")?.textContent).toBe("new");
  });
});
