// A long streaming tail is re-parsed at most every TAIL_INTERVAL_MS; between, plain text shows the new
// characters; the final text always renders exactly (markdown.js).
import { afterEach, describe, expect, test, vi } from "vitest";
import { StreamingMarkdown, TAIL_INTERVAL_MS, TAIL_LIVE_MAX, renderMarkdown } from "../src/render/markdown.js";
import { createRenderer } from "../src/render/index.js";
import { SoftSplitter } from "../src/render/soft-split.js";

/** A clock the test moves by hand. */
function manualClock() {
  const clock = { t: 1000, now: () => clock.t };
  return clock;
}

/** One plain paragraph of `count` words "w0 w1 …" (no block boundary, no delimiter). @param {number} count */
function words(count, from = 0) {
  let text = "";
  for (let i = from; i < from + count; i += 1) text += `w${i} `;
  return text;
}

/** The tail's HTML once the plain-text spans are gone, to compare with a one-shot render. @param {string} md */
function oneShotHtml(md) {
  const div = document.createElement("div");
  div.append(renderMarkdown(md));
  return div.innerHTML;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("a long tail streaming fast", () => {
  test("is parsed once per interval; the characters between show as plain text after it", () => {
    const clock = manualClock();
    const md = new StreamingMarkdown({ now: clock.now });
    const first = words(2000); // ~11 KB: over TAIL_LIVE_MAX, under SPLIT_TAIL (no soft cut yet)
    expect(first.length).toBeGreaterThan(TAIL_LIVE_MAX);
    md.update(first, true);
    const parsed = md.tail.querySelector("p");
    expect(parsed?.textContent).toBe(first); // marked keeps the paragraph's last space
    expect(md.tail.querySelector(".actx-md-raw")).toBeNull();

    clock.t += TAIL_INTERVAL_MS - 1;
    md.update(`${first}**more** w`, true);
    expect(md.tail.querySelector("p")).toBe(parsed); // not re-parsed
    const raw = md.tail.querySelectorAll(".actx-md-raw");
    expect(raw).toHaveLength(1);
    expect(raw[0].parentElement).toBe(parsed); // flows on in the same paragraph
    expect(raw[0].textContent).toBe("**more** w"); // everything after the parsed text, unparsed
    expect(parsed?.textContent).toBe(`${first}**more** w`);
    md.update(`${first}**more** w2`, true); // still inside the interval: the same text node grows
    expect(md.tail.querySelectorAll(".actx-md-raw")).toHaveLength(1);
    expect(md.tail.querySelector(".actx-md-raw")?.textContent).toBe("**more** w2");

    clock.t += 1; // the interval is over: the next update parses
    md.update(`${first}**more** w23`, true);
    expect(md.tail.querySelector(".actx-md-raw")).toBeNull();
    expect(md.tail.innerHTML).toBe(oneShotHtml(`${first}**more** w23`));
    expect(md.tail.querySelector("strong")?.textContent).toBe("more");
  });

  test("a commit that takes part of the parsed tail away shows the rest as plain text until the next parse", () => {
    const clock = manualClock();
    const md = new StreamingMarkdown({ now: clock.now });
    const first = `${words(2000)}\n\nSecond `;
    md.update(first, true); // "Second " is the tail (short: parsed at once)
    const big = `${first}${words(2000, 2000)}`; // the tail grows past TAIL_LIVE_MAX
    clock.t += 10;
    md.update(big, true); // parsed: the last parse was of a short tail, but 10 ms ago...
    // ...the interval counts from the last parse whatever its size, so this one is plain text
    expect(md.tail.querySelector(".actx-md-raw")?.textContent).toBe(words(2000, 2000));
    expect(md.tail.querySelector("p")?.textContent).toBe(big.slice(md.committed)); // "Second " + the new words
    const more = `${big}\n\nThird ${words(2000, 4000)}`; // a block boundary: "Second …" is committed
    clock.t += 10;
    md.update(more, true);
    const chunks = md.el.querySelectorAll(".actx-md-chunk");
    expect(chunks[chunks.length - 1].textContent?.trim()).toBe(`Second ${words(2000, 2000)}`.trim());
    expect(md.tail.querySelectorAll(".actx-md-raw")).toHaveLength(1);
    expect(md.tail.textContent).toBe(more.slice(md.committed)); // only the new tail, once
  });

  test("the final update renders the exact text, also when no characters came with it", () => {
    const clock = manualClock();
    const md = new StreamingMarkdown({ now: clock.now });
    const text = `${words(2000)}*end*`;
    md.update(words(2000), true);
    md.update(text, true); // plain text: "*end*"
    expect(md.tail.querySelector(".actx-md-raw")?.textContent).toBe("*end*");
    md.update(text, false); // `done` with nothing new
    expect(md.tail.querySelector(".actx-md-raw")).toBeNull();
    expect(md.tail.innerHTML).toBe(oneShotHtml(text));
    expect(md.el.classList.contains("actx-streaming")).toBe(false);
  });

  test("a stream that stops inside the interval is parsed when it is over, without another update", () => {
    vi.useFakeTimers();
    const clock = manualClock();
    const md = new StreamingMarkdown({ now: clock.now });
    md.update(words(2000), true);
    clock.t += 30;
    md.update(`${words(2000)}_last_`, true);
    expect(md.tail.querySelector("em")).toBeNull();
    vi.advanceTimersByTime(TAIL_INTERVAL_MS - 31);
    expect(md.tail.querySelector(".actx-md-raw")?.textContent).toBe("_last_");
    vi.advanceTimersByTime(1); // 100 ms after the last parse
    expect(md.tail.querySelector(".actx-md-raw")).toBeNull();
    expect(md.tail.querySelector("em")?.textContent).toBe("last");
    expect(vi.getTimerCount()).toBe(0);
  });

  test("a short tail is parsed on every update", () => {
    const clock = manualClock();
    const md = new StreamingMarkdown({ now: clock.now });
    md.update("Some *text", true);
    md.update("Some *text*", true); // no time passed, but a short tail is cheap to parse
    expect(md.tail.querySelector(".actx-md-raw")).toBeNull();
    expect(md.tail.querySelector("em")?.textContent).toBe("text");
  });

  test("nothing is lost or doubled: the shown text is the source at every step of a 200 KB stream", () => {
    const clock = manualClock();
    const md = new StreamingMarkdown({ now: clock.now });
    const text = words(30000); // ~200 KB of one paragraph: soft cuts, plain text and parses
    const squash = (/** @type {string} */ s) => s.replace(/\s+/g, " ").trim();
    let raws = 0;
    for (let end = 997; end < text.length + 997; end += 997) {
      clock.t += 30; // a batch every 30 ms
      md.update(text.slice(0, end), true);
      raws += md.tail.querySelector(".actx-md-raw") ? 1 : 0;
      expect(squash(md.el.textContent ?? "")).toBe(squash(text.slice(0, end)));
    }
    expect(raws).toBeGreaterThan(0); // the plain-text path ran
    md.update(text, false);
    expect(md.el.querySelector(".actx-md-raw")).toBeNull();
    expect(squash(md.el.textContent ?? "")).toBe(squash(text));
  });

  test("destroy() cancels the pending parse", () => {
    vi.useFakeTimers();
    const el = document.createElement("div");
    document.body.append(el);
    const renderer = createRenderer(el);
    const state = (/** @type {string} */ text) => ({ header: {}, context: [], pending: null,
      outputs: { order: ["m"], messages: { m: { id: "m", type: "text", props: { content: text } } } } });
    renderer.update(state(words(2000)), { outputs: "all" });
    const before = vi.getTimerCount(); // the scroll-follow frame
    renderer.update(state(`${words(2000)}more`), { outputs: ["m"] }); // within the interval (fake clock)
    expect(vi.getTimerCount()).toBe(before + 1);
    renderer.destroy();
    expect(vi.getTimerCount()).toBe(before);
  });
});

describe("SoftSplitter reads char codes", () => {
  test("a non-ASCII letter starts a word; a non-ASCII symbol does not", () => {
    const text = "aaaa ☃ éclair rest";
    expect(new SoftSplitter(0).find(text, 5, text.length)).toBe(7); // skips "☃", cuts before "é"
  });

  test("brackets and angle brackets must balance before a cut", () => {
    const text = "[link <x words here] y> after";
    expect(new SoftSplitter(0).find(text, 1, text.length)).toBe(24); // before "after"
  });
});
