import { afterEach, describe, expect, test, vi } from "vitest";
import { createRenderer } from "../src/render/index.js";
import { PNG_BASE64 } from "../src/render/dev/sample-state.js";

/** @type {Array<{destroy: () => void}>} */
const mounted = [];
afterEach(() => {
  while (mounted.length) mounted.pop()?.destroy();
});

/** @param {import("../src/render/index.js").RendererOptions} [options] */
function mount(options) {
  const el = document.createElement("div");
  document.body.append(el);
  const renderer = createRenderer(el, options);
  mounted.push(renderer);
  return renderer;
}

/** @param {any[]} context @param {any} [rest] */
const state = (context, rest = {}) => ({ seq: 1, header: { name: "t" }, context, pending: null, outputs: { order: [], messages: {} }, ...rest });

/** @param {string} text */
const user = (text) => ({ type: 2, content: [{ type: "text", text }] });

describe("context messages", () => {
  test("each kind renders with its data-index and data-kind", () => {
    const r = mount();
    r.update(state([
      { type: 1, content: [{ type: "text", text: "be brief" }] },
      user("hi"),
      { type: 3, content: [{ type: "text", text: "hello **there**" }] },
      { type: 4, callId: "zzz", content: [{ type: "text", text: "orphan result" }] },
      { type: "compaction", removed: 3 },
      { type: 9, content: [] },
    ]));
    const kinds = Array.from(r.root.querySelectorAll("[data-testid=actx-context] > [data-index]")).map((el) => [el.getAttribute("data-index"), el.getAttribute("data-kind")]);
    expect(kinds).toEqual([["0", "system"], ["1", "user"], ["2", "assistant"], ["3", "tool"], ["4", "record"], ["5", "unknown"]]);
    expect(r.root.querySelector("[data-index='2'] .actx-md strong")?.textContent).toBe("there");
  });

  test("a record is a collapsed <details> with its type and JSON", () => {
    const r = mount();
    r.update(state([{ type: "compaction", removed: 3 }]));
    const rec = /** @type {HTMLDetailsElement} */ (r.root.querySelector("[data-kind=record]"));
    expect(rec.tagName).toBe("DETAILS");
    expect(rec.open).toBe(false);
    expect(rec.querySelector("summary")?.textContent).toContain("compaction");
    expect(JSON.parse(rec.querySelector("pre")?.textContent ?? "")).toEqual({ type: "compaction", removed: 3 });
  });

  test("thinking is a closed <details> once settled", () => {
    const r = mount();
    r.update(state([{ type: 3, content: [{ type: "thinking", text: "hmm *deeply*" }, { type: "text", text: "ok" }] }]));
    const details = /** @type {HTMLDetailsElement} */ (r.root.querySelector("[data-block=thinking] details"));
    expect(details.open).toBe(false);
    expect(details.querySelector(".actx-md em")?.textContent).toBe("deeply");
  });

  test("toolCall shows name, call id, pretty JSON arguments, or the raw string", () => {
    const r = mount();
    r.update(state([{
      type: 3,
      content: [
        { type: "toolCall", callId: "c1", name: "search", arguments: { q: "x", k: 2 } },
        { type: "toolCall", callId: "c2", name: "broken", arguments: '{"q": "unterminated' },
      ],
    }]));
    const [a, b] = Array.from(r.root.querySelectorAll("[data-block=toolCall]"));
    expect(a.getAttribute("data-call-id")).toBe("c1");
    expect(a.querySelector(".actx-tool-name")?.textContent).toBe("search");
    expect(a.querySelector(".actx-args")?.textContent).toBe('{\n  "q": "x",\n  "k": 2\n}');
    expect(b.querySelector(".actx-args")?.getAttribute("data-args")).toBe("raw");
    expect(b.querySelector(".actx-args")?.textContent).toBe('{"q": "unterminated');
  });

  test("a tool result renders beneath its call; an unmatched one stands alone with its call id", () => {
    const r = mount();
    r.update(state([
      { type: 3, content: [{ type: "toolCall", callId: "c1", name: "f", arguments: {} }] },
      { type: 4, callId: "c1", content: [{ type: "text", text: "42" }] },
      { type: 4, callId: "nope", error: true, content: [{ type: "text", text: "boom" }] },
    ]));
    const linked = r.root.querySelector("[data-index='0'] [data-block=toolCall] [data-testid=actx-tool-result]");
    expect(linked?.getAttribute("data-index")).toBe("1");
    expect(linked?.querySelector(".actx-tool-output")?.textContent).toBe("42");
    expect(r.root.querySelector("[data-anchor-index='1']")?.hasAttribute("hidden")).toBe(true);
    const alone = r.root.querySelector("[data-testid=actx-context] > [data-index='2']");
    expect(alone?.getAttribute("data-kind")).toBe("tool");
    expect(alone?.textContent).toContain("nope");
    expect(alone?.querySelector("[data-testid=actx-tool-result]")?.getAttribute("data-error")).toBe("true");
  });

  test("a result that arrives later is drawn under the existing call", () => {
    const r = mount();
    const ctx = [user("go"), { type: 3, content: [{ type: "toolCall", callId: "c9", name: "f", arguments: {} }] }];
    r.update(state(ctx));
    expect(r.root.querySelector("[data-testid=actx-tool-result]")).toBeNull();
    r.update(state([...ctx, { type: 4, callId: "c9", error: true, content: [{ type: "text", text: "failed!" }] }]), { context: [2] });
    const result = r.root.querySelector("[data-index='1'] [data-testid=actx-tool-result]");
    expect(result?.getAttribute("data-error")).toBe("true");
    expect(result?.textContent).toContain("failed!");
  });

  test("a failed response shows its error and the retry hint", () => {
    const r = mount();
    r.update(state([
      { type: 3, content: [], error: { message: "rate limited", retry: 20 } },
      { type: 3, content: [{ type: "text", text: "partial" }], error: "connection reset" },
    ]));
    const [a, b] = Array.from(r.root.querySelectorAll("[data-testid=actx-response-error]"));
    expect(a.querySelector(".actx-error-message")?.textContent).toBe("rate limited");
    expect(a.querySelector("[data-testid=actx-retry]")?.textContent).toContain("20");
    expect(b.querySelector(".actx-error-message")?.textContent).toBe("connection reset");
    expect(b.querySelector("[data-testid=actx-retry]")).toBeNull();
  });

  test("image and binary blocks: preview, players and file chips", () => {
    const r = mount();
    r.update(state([{
      type: 2,
      content: [
        { type: "binary", mimetype: "image/png", filename: "a.png", content: PNG_BASE64 },
        { type: "binary", mimetype: "audio/wav", filename: "a.wav", content: "UklGRg==" },
        { type: "binary", mimetype: "video/mp4", filename: "a.mp4", content: "AAAA" },
        { type: "binary", mimetype: "application/pdf", filename: "doc.pdf", content: "JVBERi0x" },
        { type: "image", mimetype: "image/jpeg", content: "AAAA" },
      ],
    }]));
    const blocks = Array.from(r.root.querySelectorAll("[data-block-index]"));
    expect(blocks[0].querySelector("img")?.getAttribute("src")).toBe(`data:image/png;base64,${PNG_BASE64}`);
    expect(blocks[1].querySelector("audio")?.getAttribute("src")).toBe("data:audio/wav;base64,UklGRg==");
    expect(blocks[2].querySelector("video")?.getAttribute("src")).toBe("data:video/mp4;base64,AAAA");
    expect(blocks[3].querySelector("[src]")).toBeNull();
    const chip = blocks[3].querySelector("[data-testid=actx-file]");
    expect(chip?.querySelector(".actx-file-name")?.textContent).toBe("doc.pdf");
    // "JVBERi0x" is 8 base64 chars = 6 bytes
    expect(chip?.querySelector(".actx-file-meta")?.textContent).toBe("application/pdf · 6 B");
    expect(blocks[4].querySelector("img")?.getAttribute("src")).toBe("data:image/jpeg;base64,AAAA");
  });

  test("an updated message is patched in place and a removed one disappears", () => {
    const r = mount();
    r.update(state([user("one"), user("two")]));
    const first = r.root.querySelector("[data-index='0']");
    const secondText = r.root.querySelector("[data-index='1'] .actx-md");
    r.update(state([user("one"), user("two\n\nthree")]), { context: [1] });
    expect(r.root.querySelector("[data-index='0']")).toBe(first);
    expect(r.root.querySelector("[data-index='1'] .actx-md")).toBe(secondText);
    expect(secondText?.textContent).toContain("three");
    r.update(state([user("one")]), { context: [1] });
    expect(r.root.querySelector("[data-index='1']")).toBeNull();
    expect(r.root.querySelector("[data-index='0']")).toBe(first);
  });
});

describe("pending message", () => {
  test("renders as a streaming assistant message with thinking open, and grows in place", () => {
    const r = mount();
    const pending = (/** @type {string} */ text) => ({ type: 3, content: [{ type: "thinking", text: "plan" }, { type: "text", text }] });
    r.update(state([user("q")], { pending: pending("First para.\n\nSec") }));
    const el = /** @type {HTMLElement} */ (r.root.querySelector("[data-testid=actx-pending]"));
    expect(el.getAttribute("data-streaming")).toBe("true");
    expect(el.getAttribute("data-kind")).toBe("assistant");
    expect(/** @type {HTMLDetailsElement} */ (el.querySelector("[data-block=thinking] details")).open).toBe(true);
    const firstP = el.querySelector(".actx-md-chunk p");
    r.update(state([user("q")], { pending: pending("First para.\n\nSecond para.") }), { pending: true });
    expect(r.root.querySelector("[data-testid=actx-pending]")).toBe(el);
    expect(el.querySelector(".actx-md-chunk p")).toBe(firstP);
    expect(el.querySelector("[data-block=text] .actx-md-tail")?.textContent).toContain("Second para.");
    r.update(state([user("q"), pending("First para.\n\nSecond para.")], { pending: null }), { context: [1], pending: true });
    expect(r.root.querySelector("[data-testid=actx-pending]")).toBeNull();
    expect(r.root.querySelector("[data-index='1']")?.textContent).toContain("Second para.");
  });

  test("metadata shows under a settled message, not while streaming; a plain message has no tail", () => {
    const r = mount();
    const msg = { type: 3, content: [{ type: "text", text: "hi" }], usage: { input: 5 } };
    r.update(state([user("q")], { pending: msg }));
    const pending = /** @type {HTMLElement} */ (r.root.querySelector("[data-testid=actx-pending]"));
    expect(pending.querySelector(".actx-msg-tail")).toBeNull();
    r.update(state([user("q"), msg], { pending: null }), { context: [1], pending: true });
    const meta = r.root.querySelector("[data-index='1'] .actx-msg-tail details.actx-meta");
    expect(JSON.parse(meta?.querySelector("pre")?.textContent ?? "")).toEqual({ usage: { input: 5 } });
    expect(r.root.querySelector("[data-index='0'] .actx-msg-tail")).toBeNull();
  });

  test("the thinking summary reads \"Thinking…\" while streaming and \"Thinking\" once settled", () => {
    const r = mount();
    const msg = { type: 3, content: [{ type: "thinking", text: "plan" }] };
    r.update(state([], { pending: msg }));
    expect(r.root.querySelector("[data-testid=actx-pending] [data-block=thinking] summary")?.textContent).toBe("Thinking…");
    r.update(state([msg], { pending: null }), { context: [0], pending: true });
    expect(r.root.querySelector("[data-index='0'] [data-block=thinking] summary")?.textContent).toBe("Thinking");
  });

  test("a pending message with a response error shows it", () => {
    const r = mount();
    r.update(state([], { pending: { type: 3, content: [], error: "stream broke" } }));
    expect(r.root.querySelector("[data-testid=actx-pending] .actx-error-message")?.textContent).toBe("stream broke");
  });
});

describe("lazy rendering", () => {
  /** @param {number} n */
  const many = (n) => Array.from({ length: n }, (_, i) => user(`message ${i}`));

  test("10,000 messages render only the last page at first", () => {
    const r = mount({ pageSize: 50, IntersectionObserver: null });
    r.update(state(many(10_000)));
    const shown = r.root.querySelectorAll("[data-testid=actx-context] > [data-index]");
    expect(shown).toHaveLength(50);
    expect(shown[0].getAttribute("data-index")).toBe("9950");
    expect(shown[49].getAttribute("data-index")).toBe("9999");
    expect(r.root.querySelectorAll("*").length).toBeLessThan(1000);
    const more = /** @type {HTMLButtonElement} */ (r.root.querySelector("[data-testid=actx-load-more]"));
    expect(more.hidden).toBe(false);
    expect(more.textContent).toContain("9950");
  });

  test("the sentinel loads one more page above, in order, when it becomes visible", () => {
    /** @type {Array<(entries: any[]) => void>} */
    const callbacks = [];
    /** @type {Element[]} */
    const observed = [];
    class FakeObserver {
      /** @param {(entries: any[]) => void} cb */
      constructor(cb) {
        callbacks.push(cb);
      }
      /** @param {Element} el */
      observe(el) {
        observed.push(el);
      }
      unobserve() {}
      disconnect() {}
    }
    const r = mount({ pageSize: 100, IntersectionObserver: /** @type {any} */ (FakeObserver) });
    r.update(state(many(10_000)));
    expect(observed.at(-1)?.getAttribute("data-testid")).toBe("actx-load-more");
    callbacks[0]([{ isIntersecting: true, target: observed.at(-1) }]);
    const shown = Array.from(r.root.querySelectorAll("[data-testid=actx-context] > [data-index]")).map((el) => Number(el.getAttribute("data-index")));
    expect(shown).toHaveLength(200);
    expect(shown[0]).toBe(9800);
    expect(shown.every((v, i) => i === 0 || v === shown[i - 1] + 1)).toBe(true);
    callbacks[0]([{ isIntersecting: false, target: observed.at(-1) }]);
    expect(r.root.querySelectorAll("[data-testid=actx-context] > [data-index]")).toHaveLength(200);
  });

  test("clicking the sentinel loads the rest; appends keep working", () => {
    const r = mount({ pageSize: 2, IntersectionObserver: null });
    const ctx = many(5);
    r.update(state(ctx));
    const more = /** @type {HTMLButtonElement} */ (r.root.querySelector("[data-testid=actx-load-more]"));
    more.click();
    more.click();
    expect(more.hidden).toBe(true);
    r.update(state([...ctx, user("new")]), { context: [5] });
    const shown = Array.from(r.root.querySelectorAll("[data-testid=actx-context] > [data-index]")).map((el) => el.getAttribute("data-index"));
    expect(shown).toEqual(["0", "1", "2", "3", "4", "5"]);
  });

  test("a result whose call is above the rendered page stands alone, then links once the call is loaded", () => {
    const r = mount({ pageSize: 1, IntersectionObserver: null });
    r.update(state([
      { type: 3, content: [{ type: "toolCall", callId: "c1", name: "f", arguments: {} }] },
      { type: 4, callId: "c1", content: [{ type: "text", text: "r" }] },
    ]));
    expect(r.root.querySelector("[data-testid=actx-context] > [data-index='1']")?.getAttribute("data-kind")).toBe("tool");
    /** @type {HTMLButtonElement} */ (r.root.querySelector("[data-testid=actx-load-more]")).click();
    expect(r.root.querySelector("[data-testid=actx-context] > [data-index='1']")).toBeNull();
    expect(r.root.querySelector("[data-index='0'] [data-testid=actx-tool-result]")?.getAttribute("data-index")).toBe("1");
  });
});

describe("robustness", () => {
  test("a state with missing parts renders an empty view", () => {
    const r = mount();
    r.update(/** @type {any} */ ({}));
    expect(r.root.querySelector("[data-testid=actx-header-name]")?.textContent).toBe("Context");
    expect(r.root.querySelectorAll("[data-index]")).toHaveLength(0);
  });

  test("a block that cannot be rendered shows a fallback and logs with the package prefix", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const r = mount();
      const evil = { type: "text", get text() { throw new Error("boom"); } };
      r.update(state([{ type: 3, content: [evil, { type: "text", text: "still here" }] }]));
      expect(r.root.querySelector("[data-index='0'] .actx-render-error")?.textContent).toContain("context[0].content[0]");
      expect(r.root.querySelector("[data-index='0']")?.textContent).toContain("still here");
      expect(warn).toHaveBeenCalled();
      expect(warn.mock.calls[0][0]).toBe("[agentctx-widgets]");
    } finally {
      warn.mockRestore();
    }
  });
});

test("a context message a batch adds after the view drew the store's array is shown (the store grows it in place)", async () => {
  // Issue 18 §1: under load the tour's view drew its context before the turn's batches came, and the
  // reply then stayed below the window ("Show later messages (1 more)"): the window compared its end with
  // the length of the array the store had already grown.
  const { ProtocolStore } = await import("../src/protocol.js");
  const delta = await import("../src/delta.js");
  const store = new ProtocolStore((/** @type {any} */ o, /** @type {any} */ m) => {
    delta.applyMessageInPlace(o, m);
    return o;
  });
  const el = document.createElement("div");
  document.body.append(el);
  const r = createRenderer(el, { IntersectionObserver: null });
  const msg = (/** @type {number} */ type, /** @type {string} */ text) => ({ type, content: [{ type: "text", text }] });
  store.adopt({ seq: 1, header: { name: "t" }, context: [msg(1, "sys"), msg(2, "hi")], pending: null,
    outputs: { order: [], messages: {} } });
  r.update(store.state, /** @type {any} */ (store.takeChanges()));
  expect(r.root.querySelectorAll(".actx-msg")).toHaveLength(2);
  const added = { kind: "batch", seq: 2, ops: [{ op: "ctx", action: "added", index: 2, message: msg(3, "reply") }] };
  expect(store.applyBatch(/** @type {any} */ (added))).toBe("applied");
  r.update(store.state, /** @type {any} */ (store.takeChanges()));
  expect([...r.root.querySelectorAll(".actx-msg")].map((node) => node.textContent?.includes("reply"))).toEqual([false, false, true]);
  expect(/** @type {HTMLElement} */ (r.root.querySelector("[data-testid=actx-load-later]")).hidden).toBe(true);
  el.remove();
});
