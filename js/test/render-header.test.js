import { afterEach, describe, expect, test } from "vitest";
import { createRenderer } from "../src/render/index.js";

/** @type {Array<{destroy: () => void}>} */
const mounted = [];
afterEach(() => {
  while (mounted.length) mounted.pop()?.destroy();
});

/** @param {any} header @param {any[]} [context] */
function render(header, context = []) {
  const el = document.createElement("div");
  document.body.append(el);
  const renderer = createRenderer(el);
  mounted.push(renderer);
  renderer.update({ header, context, pending: null, outputs: { order: [], messages: {} } });
  return renderer.root;
}

/** @param {Element} root @param {string} id */
const byId = (root, id) => /** @type {HTMLElement} */ (root.querySelector(`[data-testid=${id}]`));

describe("header", () => {
  test("shows name, count, model and a usage gauge with the percentage", () => {
    const root = render({ name: "demo", count: 12, tokens: 96_000, window: 128_000, model: "gpt-6-mini" });
    expect(byId(root, "actx-header-name").textContent).toBe("demo");
    expect(byId(root, "actx-header-count").textContent).toBe("12 messages");
    expect(byId(root, "actx-header-model").textContent).toBe("gpt-6-mini");
    const gauge = byId(root, "actx-gauge");
    expect(gauge.hidden).toBe(false);
    expect(gauge.dataset.percent).toBe("75"); // 96,000 / 128,000
    expect(gauge.dataset.level).toBe("mid");
    expect(gauge.textContent).toContain("75%");
    expect(/** @type {HTMLElement} */ (gauge.querySelector(".actx-gauge-fill")).style.width).toBe("75%");
  });

  test("no gauge when the window is null", () => {
    const root = render({ name: "x", count: 1, tokens: 50, window: null });
    expect(byId(root, "actx-gauge").hidden).toBe(true);
    expect(byId(root, "actx-header-count").textContent).toBe("1 message");
  });

  test("over the window: the bar is full and the level high", () => {
    const gauge = byId(render({ tokens: 300, window: 200 }), "actx-gauge");
    expect(gauge.dataset.percent).toBe("150");
    expect(gauge.dataset.level).toBe("high");
    expect(/** @type {HTMLElement} */ (gauge.querySelector(".actx-gauge-fill")).style.width).toBe("100%");
  });

  test("an unknown token count shows a question mark, not 0%", () => {
    const gauge = byId(render({ tokens: null, window: 1000 }), "actx-gauge");
    expect(gauge.hidden).toBe(false);
    expect(gauge.textContent).toBe("? / 1,000 tokens");
  });

  test("falls back to a default name and the context length", () => {
    const root = render({}, [{ type: 2, content: [] }, { type: 2, content: [] }]);
    expect(byId(root, "actx-header-name").textContent).toBe("Context");
    expect(byId(root, "actx-header-count").textContent).toBe("2 messages");
  });

  test("destroy removes the view", () => {
    const el = document.createElement("div");
    const renderer = createRenderer(el);
    renderer.update({ header: {}, context: [], pending: null, outputs: { order: [], messages: {} } });
    renderer.destroy();
    expect(el.childElementCount).toBe(0);
  });
});

describe("rate limits", () => {
  test("OpenAI's x-ratelimit headers show as remaining/limit beside the gauge", () => {
    const root = render({
      name: "x", count: 1, tokens: 10, window: 128_000,
      rateLimits: {
        "x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "499",
        "x-ratelimit-limit-tokens": "30000", "x-ratelimit-remaining-tokens": "29950", "x-ratelimit-reset-requests": "120ms",
      },
    });
    const limits = byId(root, "actx-rate-limits");
    expect(limits.hidden).toBe(false);
    expect(limits.textContent).toBe("requests 499/500 · tokens 29,950/30,000");
    expect(limits.title).toContain("x-ratelimit-reset-requests: 120ms");
  });

  test("Anthropic's headers (input/output token limits are left to the tooltip) and retry-after", () => {
    const root = render({
      name: "x", count: 1, tokens: 10, window: null,
      rateLimits: {
        "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-input-tokens-remaining": "1000", "retry-after": "7",
      },
    });
    expect(byId(root, "actx-rate-limits").textContent).toBe("requests 0/50 · retry after 7 s");
  });

  test("no rate limits, nothing shown", () => {
    const root = render({ name: "x", count: 1, tokens: 10, window: null });
    expect(byId(root, "actx-rate-limits").hidden).toBe(true);
  });
});

describe("diagnostics", () => {
  test("a badge counts them and opens a list with code, message, where and hint", () => {
    const root = render({
      name: "x", count: 1, tokens: 1, window: null,
      diagnostics: [
        { code: "unknown_id", message: "delta for 'status', which was never sent", where: "Create: message 'status'", hint: "check the id" },
        { code: "shared_slot", message: "2 messages without an id share one slot", where: "Create: message #2", hint: "give every message an id" },
      ],
    });
    const box = byId(root, "actx-diagnostics");
    expect(box.hidden).toBe(false);
    expect(/** @type {HTMLElement} */ (box.querySelector("summary")).textContent).toBe("⚠ 2 diagnostics");
    const items = [...box.querySelectorAll("li")].map((li) => [li.dataset.code, li.textContent]);
    expect(items).toEqual([
      ["unknown_id", "unknown_id delta for 'status', which was never sentCreate: message 'status'check the id"],
      ["shared_slot", "shared_slot 2 messages without an id share one slotCreate: message #2give every message an id"],
    ]);
  });

  test("none, no badge; text stays text (no HTML from a diagnostic)", () => {
    expect(byId(render({ name: "x", count: 1 }), "actx-diagnostics").hidden).toBe(true);
    const root = render({ name: "x", count: 1, diagnostics: [{ code: "<b>x</b>", message: "<img src=x onerror=alert(1)>", where: "", hint: "" }] });
    expect(root.querySelector("img")).toBeNull();
    expect(byId(root, "actx-diagnostics").textContent).toContain("<img src=x onerror=alert(1)>");
  });
});

describe("header cost (issue 23)", () => {
  const priced = { total: "0.0035", currency: "USD", parts: { input: "0.0025", output: "0.001" },
    source: "genai-prices 0.2.3 (bundled data)", estimated: false, unpriced: [], free: false, calls: 1, message: null };

  test("the turn's and the context's cost beside the gauge, with where the figure came from", () => {
    // 1000 prompt + 100 completion tokens of gpt-4o at $2.50 / $10.00 per million: 0.0025 + 0.001
    const root = render({ tokens: 10, window: 1000, turnCost: priced, contextCost: { ...priced, total: "0.007", calls: 2 } });
    const turn = byId(root, "actx-turn-cost");
    expect(byId(root, "actx-cost").hidden).toBe(false);
    expect(turn.textContent).toBe("turn $0.0035");
    expect(byId(root, "actx-context-cost").textContent).toBe("context $0.007");
    expect(turn.title).toBe("$0.0035 USD: input $0.0025 · output $0.001\npriced by genai-prices 0.2.3 (bundled data)");
    expect(turn.dataset.unpriced).toBe("0");
    // it sits between the rate limits and the gauge
    expect(byId(root, "actx-cost").nextElementSibling).toBe(byId(root, "actx-gauge"));
  });

  test("an unknown model reads unpriced, never $0, and the title says how to give prices=", () => {
    const message = "unpriced: my-local — genai-prices has no price for it; give one …";
    const root = render({ turnCost: { total: null, currency: "USD", parts: {}, source: "", estimated: false,
      unpriced: ["my-local"], free: false, calls: 1, message } });
    const turn = byId(root, "actx-turn-cost");
    expect(turn.textContent).toBe("turn unpriced");
    expect(turn.textContent).not.toContain("$");
    expect(turn.title).toBe(message);
    expect(turn.dataset.unpriced).toBe("1");
    expect(byId(root, "actx-context-cost").hidden).toBe(true);
  });

  test("an estimate is marked ≈ and estimated; part priced, part not; free", () => {
    const root = render({ turnCost: { ...priced, estimated: true },
      contextCost: { ...priced, unpriced: ["my-local"], message: "unpriced: my-local — …" } });
    expect(byId(root, "actx-turn-cost").textContent).toBe("turn ≈ $0.0035");
    expect(byId(root, "actx-turn-cost").title).toContain("estimated: some of the usage was estimated");
    expect(byId(root, "actx-context-cost").textContent).toBe("context $0.0035 + unpriced");
    const free = render({ turnCost: { ...priced, total: "0", parts: {}, free: true, source: "prices= (free)" } });
    expect(byId(free, "actx-turn-cost").textContent).toBe("turn $0 (free)");
  });

  test("no cost, a float of money or a malformed total: nothing is shown rather than a wrong figure", () => {
    expect(byId(render({ tokens: 1, window: 10 }), "actx-cost").hidden).toBe(true);
    for (const total of [0.0035, "1e-3", "$1", "NaN", ""]) {
      const root = render({ turnCost: { ...priced, total } });
      expect(byId(root, "actx-turn-cost").hidden).toBe(true);
      expect(byId(root, "actx-cost").hidden).toBe(true);
    }
  });
});
