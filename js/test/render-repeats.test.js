// Output messages that repeat a block of a reply the view shows fold into one line that opens to the whole
// message (docs/decisions.md); tests/vectors/repeats.json, the cases the static document folds alike
// (tests/test_document_repeats.py).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import { createRenderer } from "../src/render/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const vectors = JSON.parse(readFileSync(join(here, "..", "..", "tests", "vectors", "repeats.json"), "utf8"));

/** @type {Array<{destroy: () => void}>} */
const mounted = [];
afterEach(() => {
  while (mounted.length) mounted.pop()?.destroy();
});

/** @param {any} c */
function stateOf(c) {
  const context = c.entries.filter((/** @type {any} */ m) => !m.pending);
  const pending = c.entries.find((/** @type {any} */ m) => m.pending);
  const { pending: _, ...message } = pending ?? {};
  return {
    header: {}, context, pending: pending ? message : null,
    outputs: { order: c.outputs.map((/** @type {any} */ m) => m.id), messages: Object.fromEntries(c.outputs.map((/** @type {any} */ m) => [m.id, m])) },
  };
}

function mount() {
  const el = document.createElement("div");
  document.body.append(el);
  const r = createRenderer(el);
  mounted.push(r);
  return r;
}

/** @param {HTMLElement} root */
const folded = (root) => [...root.querySelectorAll("[data-output-id]")].filter((el) => el.querySelector(":scope > [data-testid=actx-repeat]"));

describe("outputs that repeat the reply (tests/vectors/repeats.json)", () => {
  test.each(vectors.cases.map((/** @type {any} */ c) => [c.name, c]))("%s", (_, c) => {
    const r = mount();
    r.update(stateOf(c));
    const els = folded(r.root);
    expect(els.map((el) => el.getAttribute("data-output-id"))).toEqual(c.folded);
    expect(els.map((el) => el.querySelector(".actx-repeat-line")?.textContent)).toEqual(c.lines);
    for (const el of els) {
      const details = /** @type {HTMLDetailsElement} */ (el.querySelector(":scope > details"));
      expect(details.open).toBe(false); // one line ...
      expect(details.children.length).toBe(2); // ... that opens to the whole message
    }
    // nothing is dropped: every output is on the page with its text
    for (const m of c.outputs) expect(r.root.querySelector(`[data-output-id="${m.id}"]`)).not.toBeNull();
  });

  test("an output that came before its reply was committed folds when it is, and unfolds if it goes", () => {
    const c = vectors.cases[0];
    const r = mount();
    const s = stateOf(c);
    r.update({ ...s, context: s.context.slice(0, 1) });
    expect(folded(r.root)).toEqual([]);
    r.update(s, { context: "all" });
    expect(folded(r.root).map((el) => el.getAttribute("data-output-id"))).toEqual(c.folded);
    const text = r.root.querySelector('[data-output-id="r1_1"]');
    expect(text?.textContent).toContain("Let me check.");
    r.update({ ...s, context: s.context.slice(0, 1) }, { context: "all" });
    expect(folded(r.root)).toEqual([]);
  });
});
