/**
 * Browser benchmark (not the widget): streams 100,000 small deltas (≈500 KB of Markdown) into the
 * pending message, one renderer update per 30 deltas, then renders a 10,000-message context.
 * Writes the numbers as JSON into #result. Run by dev/bench.mjs.
 */
import { createRenderer } from "../index.js";
import { StreamingMarkdown } from "../markdown.js";

const DOC = `## Step {n}

Some *reasoning* about the problem, with \`inline code\` and a [link](https://example.com).
It continues on a second line of the same paragraph.

- first point
- second point with **bold**

\`\`\`python
def step_{n}(x):
    # blank line inside the fence follows

    return x * {n}
\`\`\`

| a | b |
|---|---|
| {n} | {n} |

`;

function text(size) {
  let out = "";
  for (let n = 0; out.length < size; n += 1) out += DOC.replaceAll("{n}", String(n));
  return out.slice(0, size);
}

const result = {};
const app = document.getElementById("app");
const renderer = createRenderer(app);
const params = new URLSearchParams(location.search);
const full = text(Number(params.get("size") ?? 500_000));
const DELTAS = Number(params.get("deltas") ?? 100_000);
const step = full.length / DELTAS;
const pending = { type: 3, content: [{ type: "text", text: "" }] };
renderer.update({ header: { name: "bench" }, context: [], pending, outputs: { order: [], messages: {} } });
const times = [];
const layouts = [];
let sent = 0;
for (let d = 1; d <= DELTAS; d += 1) {
  const end = Math.round(d * step);
  pending.content[0].text = full.slice(0, end);
  sent += 1;
  if (sent % 30 === 0 || d === DELTAS) {
    const t0 = performance.now();
    renderer.update({ header: { name: "bench" }, context: [], pending, outputs: { order: [], messages: {} } }, { pending: true });
    times.push(performance.now() - t0);
    const t1 = performance.now();
    void app.offsetHeight; // the layout a frame would do
    layouts.push(performance.now() - t1);
  }
}
times.sort((a, b) => a - b);
const total = times.reduce((a, b) => a + b, 0);
Object.assign(result, {
  stream_chars: full.length,
  stream_deltas: DELTAS,
  stream_updates: times.length,
  stream_total_ms: Math.round(total),
  stream_median_update_ms: +times[Math.floor(times.length / 2)].toFixed(3),
  stream_p99_update_ms: +times[Math.floor(times.length * 0.99)].toFixed(3),
  stream_max_update_ms: +times[times.length - 1].toFixed(3),
  layout_median_ms: +layouts.sort((a, b) => a - b)[Math.floor(layouts.length / 2)].toFixed(3),
  layout_max_ms: +layouts[layouts.length - 1].toFixed(3),
  md_nodes: app.querySelectorAll(".actx-md *").length,
});
renderer.destroy();

if (params.get("mdonly")) {
  const md = new StreamingMarkdown();
  app.append(md.el);
  const t = [];
  for (let d = 30; d <= DELTAS; d += 30) {
    const t0 = performance.now();
    md.update(full.slice(0, Math.round(d * step)), true);
    t.push(performance.now() - t0);
  }
  t.sort((a, b) => a - b);
  result.mdonly_median_ms = +t[Math.floor(t.length / 2)].toFixed(3);
  result.mdonly_detached_note = "attached, no layout forced";
  md.el.remove();
}

const many = Array.from({ length: 10_000 }, (_, i) => ({ type: (i % 2) + 2, content: [{ type: "text", text: `Message ${i} with some **markdown** text.` }] }));
const r2 = createRenderer(app);
const t0 = performance.now();
r2.update({ header: { name: "10k" }, context: many, pending: null, outputs: { order: [], messages: {} } });
void app.offsetHeight; // include layout
Object.assign(result, {
  context_messages: many.length,
  context_first_render_ms: Math.round(performance.now() - t0),
  context_dom_messages: app.querySelectorAll("[data-index]").length,
  context_dom_nodes: app.querySelectorAll("*").length,
});
// Scrolling up: the IntersectionObserver sentinel loads one more page and keeps the view in place.
const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
const body = /** @type {HTMLElement} */ (app.querySelector("[data-testid=actx-body]"));
for (let i = 0; i < 3; i += 1) await frame();
result.scroll_at_bottom = body.scrollTop + body.clientHeight >= body.scrollHeight - 2;
const before = app.querySelectorAll("[data-index]").length;
body.scrollTop = 0;
for (let i = 0; i < 120 && app.querySelectorAll("[data-index]").length === before; i += 1) await frame();
result.scroll_up_messages_before = before;
result.scroll_up_messages_after = app.querySelectorAll("[data-index]").length;
result.scroll_up_kept_position = body.scrollTop > 0;

const pre = document.createElement("pre");
pre.id = "result";
pre.textContent = JSON.stringify(result);
document.body.append(pre);
