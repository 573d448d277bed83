// Duration chips: tests/vectors/durations.json, the cases the static document (tests/test_html_durations.py)
// draws the same way. A Yao message or block with no measured time (duration_ms 0) carries no chip.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import { createRenderer } from "../src/render/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const vectors = JSON.parse(readFileSync(join(here, "..", "..", "tests", "vectors", "durations.json"), "utf8"));

/** @type {Array<{destroy: () => void}>} */
const mounted = [];
afterEach(() => {
  while (mounted.length) mounted.pop()?.destroy();
});

/** @param {any[]} messages */
function render(messages) {
  const el = document.createElement("div");
  document.body.append(el);
  const r = createRenderer(el);
  mounted.push(r);
  r.update({ header: {}, context: [], pending: null,
    outputs: { order: messages.map((m) => m.id), messages: Object.fromEntries(messages.map((m) => [m.id, m])) } });
  return r.root;
}

describe("duration chips (tests/vectors/durations.json)", () => {
  test.each(vectors.messages.map((/** @type {any} */ c) => [JSON.stringify(c.metadata), c]))("message %s", (_, c) => {
    const root = render([{ id: "m", type: "text", props: { content: "hi" }, done: true, metadata: c.metadata }]);
    const chip = root.querySelector('[data-output-id="m"] [data-testid=actx-duration]');
    expect(chip?.textContent ?? null).toBe(c.chip);
  });

  test.each(vectors.blocks.map((/** @type {any} */ c) => [JSON.stringify(c.block), c]))("block %s", (_, c) => {
    const root = render([{ id: "m", type: "text", props: { content: "hi" }, done: true, group_id: "B1", metadata: { block: c.block } }]);
    expect(root.querySelector(".actx-group-title")?.textContent).toContain("Block B1");
    const chip = root.querySelector(".actx-group-title [data-testid=actx-block-duration]");
    expect(chip?.textContent ?? null).toBe(c.chip);
  });
});
