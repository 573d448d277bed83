// Every sequence of tests/vectors/protocol.json (recorded from the kernel's real StreamProtocol by
// tests/vectors/make_protocol_vectors.py) replayed through the real connect/ProtocolStore and the real
// delta engine: the page must end on exactly the kernel's state, and send exactly the sync requests
// the case says it sends, when it says.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { applyMessageInPlace } from "../src/delta.js";
import { connect } from "../src/protocol.js";

const here = dirname(fileURLToPath(import.meta.url));
const vectors = JSON.parse(readFileSync(join(here, "..", "..", "tests", "vectors", "protocol.json"), "utf8"));

/** The engine as the widget entry wires it (js/src/index.js): in place, on the store's own copy. */
function applyOut(/** @type {any} */ outputs, /** @type {any} */ message) {
  applyMessageInPlace(outputs, message);
  return outputs;
}

/** An anywidget-like model: traits, listeners, and what the view sent. */
function mockModel() {
  /** @type {Map<string, Set<Function>>} */
  const listeners = new Map();
  /** @type {Record<string, any>} */
  const traits = { _snapshot: "" };
  return {
    /** @type {any[]} */
    sent: [],
    get: (/** @type {string} */ name) => traits[name],
    on(/** @type {string} */ event, /** @type {Function} */ cb) {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event)?.add(cb);
    },
    off(/** @type {string} */ event, /** @type {Function} */ cb) {
      listeners.get(event)?.delete(cb);
    },
    send(/** @type {any} */ content) {
      this.sent.push(content);
    },
    setTrait(/** @type {string} */ name, /** @type {any} */ value) {
      traits[name] = value;
      this.emit(`change:${name}`);
    },
    emit(/** @type {string} */ event, /** @type {any[]} */ ...args) {
      for (const cb of listeners.get(event) ?? []) cb(...args);
    },
  };
}

/**
 * Replay one case; returns the last view's store, what it rendered last, and every sync it sent.
 * @param {any} testCase
 */
function replay(testCase) {
  const model = mockModel();
  const clock = { t: 0 };
  /** @type {(() => void)[]} */
  let frames = [];
  /** @type {{controller: AbortController, store: import("../src/protocol.js").ProtocolStore, rendered: any} | null} */
  let view = null;
  /** @type {any[]} */
  const expectedSends = [];
  for (const event of testCase.events) {
    clock.t = event.t;
    // what the view sent so far: checked before the kernel's next move (a sync is answered after it)
    if (!event.view_sends) expect(model.sent, `${testCase.name} at ${event.t} ms`).toEqual(expectedSends);
    if (event.trait) {
      // the kernel writes JSON text with `seq` first (orjson keeps the key order; so does JSON.stringify)
      model.setTrait("_snapshot", JSON.stringify(event.trait));
    } else if (event.render) {
      view?.controller.abort(); // a reload: the old view goes, a new one renders from the trait
      const controller = new AbortController();
      const current = { controller, store: /** @type {any} */ (null), rendered: /** @type {any} */ (null) };
      current.store = connect({
        model,
        renderer: { update: (state) => (current.rendered = structuredClone(state)) },
        applyOut,
        signal: controller.signal,
        requestFrame: (cb) => frames.push(cb),
        cancelFrame: () => (frames = []),
        now: () => clock.t,
      });
      view = current;
    } else if (event.kernel) {
      if (!event.lost) model.emit("msg:custom", event.kernel);
    } else if (event.view_sends) {
      expectedSends.push(event.view_sends);
    }
    const due = frames;
    frames = [];
    for (const cb of due) cb();
  }
  expect(model.sent, `${testCase.name} at the end`).toEqual(expectedSends);
  if (!view) throw new Error(`${testCase.name}: no view rendered`);
  return { store: view.store, rendered: view.rendered, sent: model.sent };
}

describe("protocol vectors", () => {
  it("the file holds every case the generator names", () => {
    expect(vectors.map((/** @type {any} */ c) => c.name)).toEqual([
      "folded appends",
      "gap",
      "late view",
      "reload",
      "settled trait catches a view up",
      "clear_output",
      "context edits",
    ]);
  });

  for (const testCase of vectors) {
    it(`${testCase.name}: the page ends on the kernel's state`, () => {
      const { store, rendered } = replay(testCase);
      expect(store.state).toEqual(testCase.final);
      expect(rendered).toEqual(testCase.final); // and the renderer was handed that state last
    });
  }

  // Expected values worked out by hand from the inputs each case sends (make_protocol_vectors.py),
  // not read from the kernel's output: the kernel could be wrong too.
  const byName = Object.fromEntries(vectors.map((/** @type {any} */ c) => [c.name, c]));
  const content = (/** @type {any} */ state, /** @type {string} */ id) => state.outputs.messages[id].props.content;

  it("by hand: folded appends", () => {
    const { store } = replay(byName["folded appends"]);
    // "He" + "ll" "o" "," " world", then "!" twice interleaved with n's "a" "b", then "?" with done
    expect(content(store.state, "m")).toBe("Hello, world!!?");
    expect(store.state.outputs.messages.m.done).toBe(true);
    expect(content(store.state, "n")).toBe("ab");
    expect(store.state.outputs.order).toEqual(["m", "n"]);
  });

  it("by hand: a gap is repaired by a snapshot (b was in the lost batch)", () => {
    const { store, sent } = replay(byName.gap);
    expect(sent).toEqual([
      { kind: "sync", seq: 0 }, // on render
      { kind: "sync", seq: 1 }, // batch 3 came after batch 1
    ]);
    expect(content(store.state, "m")).toBe("abcd");
    expect(store.seq).toBe(4);
  });

  it("by hand: a late view and a reloaded view get what they missed", () => {
    const late = replay(byName["late view"]).store;
    expect(content(late.state, "m")).toBe("sent before any view rendered; lost; after");
    expect(late.state.context).toEqual([{ type: 2, content: [{ type: "text", text: "hi" }] }]);
    const reloaded = replay(byName.reload).store;
    expect(content(reloaded.state, "m")).toBe("one two three");
    const caughtUp = replay(byName["settled trait catches a view up"]);
    expect(caughtUp.sent).toEqual([{ kind: "sync", seq: 0 }]); // no gap was seen: the trait repaired it
    expect(content(caughtUp.store.state, "m")).toBe("xyz");
  });

  it("by hand: clear_output and the shared slot", () => {
    const { store } = replay(byName.clear_output);
    expect(store.state.outputs.order).toEqual(["m", "ai-response-unknown"]);
    expect(content(store.state, "m")).toBe("new");
    expect(content(store.state, "ai-response-unknown")).toBe(" slot");
    expect(store.state.context).toHaveLength(1);
  });

  it("by hand: context edits", () => {
    const { store } = replay(byName["context edits"]);
    // reset to [A, B]; add "third" at 2; update 0; remove 1; commit the pending message at 2
    expect(store.state.context.map((/** @type {any} */ m) => m.content[0].text)).toEqual(["A, edited", "third", "Thinking"]);
    expect(store.state.context[2].content[1]).toEqual({ type: "toolCall", callId: "c1", name: "f", arguments: {} });
    expect(store.state.pending).toBeNull();
    expect(store.state.header.count).toBe(3);
  });
});
