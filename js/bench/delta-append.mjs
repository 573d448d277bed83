// Per-delta cost of a text append through the JS delta engine (applyMessageInPlace, as the front end
// calls it) onto a message that already holds 10k vs 1M characters: flat means no copy of the
// accumulated text per delta. A bare `text += piece` loop is the baseline (the least the job costs).
//
//     node js/bench/delta-append.mjs [--deltas N]
//
// Why flat without a parts list of our own: `a + b` on long strings makes a rope in every JavaScript
// engine (V8's ConsString: the two parts, joined when the text is first read); the engine keeps the
// state's string as parts and joins lazily. The last rows show what a read costs (it joins the parts).
import { applyMessageInPlace, newState } from "../src/delta.js";

const argDeltas = process.argv.indexOf("--deltas");
const DELTAS = argDeltas > 0 ? Number(process.argv[argDeltas + 1]) : 50_000;
const SIZES = [10_000, 1_000_000];

/** @param {number} n */
function deltas(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push({ type: "text", id: "m", props: { content: `${String(i % 10000).padStart(4, "0")} ` }, delta: true,
      delta_path: "content", delta_action: "append" });
  }
  return out;
}

/** µs per delta through the engine, onto `size` characters; `readEvery` > 0 reads the text's tail that often. */
function engine(size, messages, readEvery = 0) {
  const state = newState();
  applyMessageInPlace(state, { type: "text", id: "m", props: { content: "x".repeat(size) } });
  let seen = 0;
  const start = performance.now();
  for (let i = 0; i < messages.length; i++) {
    applyMessageInPlace(state, messages[i]);
    if (readEvery && i % readEvery === 0) seen += state.messages.m.props.content.slice(-80).length;
  }
  const elapsed = performance.now() - start;
  if (state.messages.m.props.content.length !== size + 5 * messages.length) throw new Error("wrong length");
  return (elapsed * 1000) / messages.length + seen * 0;
}

/** µs per piece for a bare `text += piece` onto `size` characters. */
function bare(size, messages) {
  let text = "x".repeat(size);
  const start = performance.now();
  for (let i = 0; i < messages.length; i++) text += messages[i].props.content;
  const elapsed = performance.now() - start;
  if (text.length !== size + 5 * messages.length) throw new Error("wrong length");
  return (elapsed * 1000) / messages.length;
}

/** @param {() => number} fn best of 5 (the first runs warm the JIT) */
const best = (fn) => Math.min(...Array.from({ length: 5 }, fn));

const messages = deltas(DELTAS);
const rows = [];
for (const size of SIZES) {
  rows.push([`bare text += piece, onto ${size.toLocaleString("en")} chars`, best(() => bare(size, messages))]);
}
for (const size of SIZES) {
  rows.push([`applyMessageInPlace append, onto ${size.toLocaleString("en")} chars`, best(() => engine(size, messages))]);
}
for (const size of SIZES) {
  rows.push([`... reading the tail every 100 deltas, ${size.toLocaleString("en")}`, best(() => engine(size, messages, 100))]);
}
console.log(`${DELTAS.toLocaleString("en")} append deltas of 5 characters (best of 5, µs per delta)`);
for (const [name, us] of rows) console.log(`  ${String(name).padEnd(58)} ${us.toFixed(3).padStart(8)}`);
const [, , small, large, readSmall, readLarge] = rows.map((row) => Number(row[1]));
console.log(`  growth 10k -> 1M chars: engine x${(large / small).toFixed(2)}, with reads x${(readLarge / readSmall).toFixed(2)}`);
console.log(`  engine / bare at 1M: x${(large / Number(rows[1][1])).toFixed(1)}`);
