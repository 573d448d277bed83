// The loader's early feed: a view rendered after the first batches starts from them (loader.js
// `initialize`), through the real protocol store (protocol.js `connect`) and the real delta engine.
import { afterEach, describe, expect, it, vi } from "vitest";
import { applyMessageInPlace } from "../src/delta.js";
import { createLoader, EarlyFeed, PREBUILT, prebuiltFor, REF_PREFIX } from "../src/loader.js";
import { connect, emptyState } from "../src/protocol.js";

const MODULES = Symbol.for("agentctx-widgets.bundle-modules");
const DIGEST = "0123456789abcdef0123456789abcdef";

/** An anywidget-like model: traits, listeners the test fires, recorded sends. */
function mockModel(traits = {}, manager = undefined) {
  const listeners = new Map();
  const values = { _snapshot: "", ...traits };
  return {
    sent: [],
    widget_manager: manager,
    get: (name) => values[name],
    on(event, cb) {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event).add(cb);
    },
    off(event, cb) {
      listeners.get(event)?.delete(cb);
    },
    send(content) {
      this.sent.push(content);
    },
    emit(event, ...args) {
      for (const cb of [...(listeners.get(event) ?? [])]) cb(...args);
    },
    setTrait(name, value) {
      values[name] = value;
      this.emit(`change:${name}`);
    },
    listenerCount: () => [...listeners.values()].reduce((n, set) => n + set.size, 0),
  };
}

const snapshotText = (seq, extra = {}) => JSON.stringify({ ...emptyState(), seq, ...extra });
const ctxAdded = (index, text) => ({ op: "ctx", action: "added", index, message: { role: "user", content: text } });
const pending = (text) => ({ op: "pending", message: { role: "assistant", content: [{ type: "text", text }] } });
const grow = (text) => ({ op: "pending_append", index: 0, key: "text", text });
const batch = (seq, ops) => ({ kind: "batch", seq, ops });

function applyOut(outputs, message) {
  applyMessageInPlace(outputs, message);
  return outputs;
}

/** The store a view builds from `early`; `frame()` runs the animation frame it asked for. */
function view(model, early) {
  const updates = [];
  const frames = [];
  const controller = new AbortController();
  const store = connect({
    model,
    renderer: { update: (state) => updates.push(structuredClone(state)) },
    applyOut,
    signal: controller.signal,
    requestFrame: (cb) => frames.push(cb),
    cancelFrame: () => frames.splice(0),
    early,
  });
  const frame = () => frames.splice(0).forEach((cb) => cb());
  return { store, updates, controller, frame };
}

/** A bundle whose render runs the real connect, as js/src/index.js does. */
function bundleWidget() {
  const rendered = [];
  return {
    rendered,
    render(props) {
      rendered.push(props);
      const { store } = view(props.model, props.early);
      props.el.dataset.text = store.state.pending?.content?.[0]?.text ?? "";
      return undefined;
    },
  };
}

function manager(models) {
  return {
    async get_model(id) {
      if (!(id in models)) throw new Error(`widget model not found: ${id}`);
      return models[id];
    },
  };
}

afterEach(() => {
  document.head.replaceChildren();
  delete (/** @type {any} */ (globalThis))[MODULES];
  delete (/** @type {any} */ (globalThis))[PREBUILT];
  vi.restoreAllMocks();
});

describe("EarlyFeed + connect", () => {
  it("a view rendered after the first batches starts from them and asks the kernel for nothing", () => {
    const model = mockModel({ _snapshot: snapshotText(0) });
    const feed = new EarlyFeed(model);
    model.emit("msg:custom", batch(1, [ctxAdded(0, "hi")]));
    model.emit("msg:custom", batch(2, [pending("Zeph")]));
    model.emit("msg:custom", batch(3, [grow("yr")]));
    const early = feed.take();
    expect(early.complete).toBe(true);
    expect(early.messages.map((m) => m.seq)).toEqual([1, 2, 3]);

    const { store, updates, frame } = view(model, early);
    frame();
    expect(updates.length).toBe(1); // one frame draws the snapshot and the three batches
    expect(store.seq).toBe(3);
    expect(store.state.context).toEqual([{ role: "user", content: "hi" }]);
    expect(store.state.pending.content[0].text).toBe("Zephyr");
    expect(model.sent).toEqual([]); // no sync: it holds the kernel's state
    expect(updates.at(-1).pending.content[0].text).toBe("Zephyr");

    // live batches go on from there; the feed keeps them too (for a later view), and never shares objects
    model.emit("msg:custom", batch(4, [grow(" quartz")]));
    expect(store.state.pending.content[0].text).toBe("Zephyr quartz");
    const second = view(model, feed.take()).store;
    expect(second.state.pending.content[0].text).toBe("Zephyr quartz");
    expect(feed.take().messages[1].ops[0].message.content[0].text).toBe("Zeph"); // untouched by the views
  });

  it("a view without early messages asks for a snapshot, as before", () => {
    const model = mockModel({ _snapshot: snapshotText(0) });
    view(model, undefined);
    expect(model.sent).toEqual([{ kind: "sync", seq: 0 }]);
  });

  it("a gap among the early messages (sent before the model existed) applies nothing after it and asks", () => {
    const model = mockModel({ _snapshot: snapshotText(0) });
    const feed = new EarlyFeed(model);
    model.emit("msg:custom", batch(3, [pending("late")]));
    model.emit("msg:custom", batch(4, [grow("r")]));
    const { store } = view(model, feed.take());
    expect(store.seq).toBe(0);
    expect(store.state.pending).toBe(null);
    expect(model.sent).toEqual([{ kind: "sync", seq: 0 }]);
  });

  it("over its cap it drops the oldest, is no longer complete, and the view asks instead of applying a partial sequence", () => {
    const model = mockModel({ _snapshot: snapshotText(0) });
    const feed = new EarlyFeed(model, { maxMessages: 3 });
    for (let seq = 1; seq <= 5; seq += 1) model.emit("msg:custom", batch(seq, [seq === 1 ? pending("a") : grow(String(seq))]));
    const early = feed.take();
    expect(early.complete).toBe(false);
    expect(early.messages.map((m) => m.seq)).toEqual([3, 4, 5]);
    const { store } = view(model, early);
    expect(store.seq).toBe(0); // batches 3..5 after the snapshot at 0: a gap, none applied
    expect(store.state.pending).toBe(null);
    expect(model.sent).toEqual([{ kind: "sync", seq: 0 }]);
    // the kernel's answer repairs it
    model.emit("msg:custom", { kind: "snapshot", seq: 5, state: { ...emptyState(), seq: 5, pending: { role: "assistant", content: [{ type: "text", text: "a2345" }] } } });
    expect(store.state.pending.content[0].text).toBe("a2345");
  });

  it("counts characters too: one message bigger than the cap is dropped alone", () => {
    const model = mockModel({ _snapshot: snapshotText(0) });
    const feed = new EarlyFeed(model, { maxChars: 200 });
    model.emit("msg:custom", batch(1, [pending("x".repeat(500))]));
    expect(feed.take()).toEqual({ messages: [], complete: false });
    expect(feed.chars).toBe(0);
  });

  it("a synced _snapshot that covers what was dropped makes it complete again, and lets go of what it holds", () => {
    const model = mockModel({ _snapshot: snapshotText(0) });
    const feed = new EarlyFeed(model, { maxMessages: 2 });
    model.emit("msg:custom", batch(1, [pending("a")]));
    model.emit("msg:custom", batch(2, [grow("b")]));
    model.emit("msg:custom", batch(3, [grow("c")]));
    expect(feed.take().complete).toBe(false); // batch 1 dropped
    const caughtUp = { role: "assistant", content: [{ type: "text", text: "abc" }] };
    model.setTrait("_snapshot", snapshotText(3, { pending: caughtUp }));
    model.emit("msg:custom", batch(4, [grow("d")]));
    const early = feed.take();
    expect(early).toEqual({ messages: [batch(4, [grow("d")])], complete: true });
    const { store } = view(model, early);
    expect(store.state.pending.content[0].text).toBe("abcd");
    expect(model.sent).toEqual([]);
  });

  it("a snapshot message replaces everything before it", () => {
    const model = mockModel({ _snapshot: snapshotText(0) });
    const feed = new EarlyFeed(model, { maxMessages: 2 });
    for (let seq = 1; seq <= 4; seq += 1) model.emit("msg:custom", batch(seq, [seq === 1 ? pending("a") : grow("b")]));
    const state = { ...emptyState(), seq: 4, pending: { role: "assistant", content: [{ type: "text", text: "abbb" }] } };
    model.emit("msg:custom", { kind: "snapshot", seq: 4, state });
    model.emit("msg:custom", batch(5, [grow("!")]));
    const early = feed.take();
    expect(early.complete).toBe(true);
    expect(early.messages.map((m) => [m.kind, m.seq])).toEqual([["snapshot", 4], ["batch", 5]]);
    expect(view(model, early).store.state.pending.content[0].text).toBe("abbb!");
  });

  it("ignores what is not a kernel message, and stops listening when stopped", () => {
    const model = mockModel();
    const feed = new EarlyFeed(model);
    model.emit("msg:custom", { kind: "batch", seq: "1", ops: [] });
    model.emit("msg:custom", { hello: "other library" });
    expect(feed.take().messages).toEqual([]);
    expect(model.listenerCount()).toBe(2);
    feed.stop();
    expect(model.listenerCount()).toBe(0);
    model.emit("msg:custom", batch(1, []));
    expect(feed.take().messages).toEqual([]);
  });
});

describe("createLoader: initialize, then render", () => {
  it("buffers from initialize on (before any view) and hands the messages to the bundle's render", async () => {
    const widget = bundleWidget();
    const bundle = mockModel({ digest: DIGEST, esm: "export default {}", css: "" });
    let imported = 0;
    (/** @type {any} */ (globalThis))[MODULES] = new Map([[DIGEST, Promise.resolve({ default: widget }).then((m) => (imported += 1, m))]]);
    const model = mockModel({ _snapshot: snapshotText(0), _bundle: `${REF_PREFIX}b` }, manager({ b: bundle }));
    const loader = createLoader();
    const controller = new AbortController();
    const cleanup = loader.initialize({ model, signal: controller.signal });
    expect(typeof cleanup).toBe("function"); // returned at once: anywidget holds the model's messages until then
    model.emit("msg:custom", batch(1, [pending("Zeph")]));
    model.emit("msg:custom", batch(2, [grow("yr")]));
    const el = document.createElement("div");
    await loader.render({ model, el });
    expect(imported).toBe(1);
    expect(widget.rendered[0].early).toEqual({ messages: [batch(1, [pending("Zeph")]), batch(2, [grow("yr")])], complete: true });
    expect(el.dataset.text).toBe("Zephyr");
    expect(model.sent).toEqual([]);

    controller.abort(); // the model went away (or its _esm changed): the feed stops
    expect(model.listenerCount()).toBe(2); // only the view's own store is left listening
  });

  it("uses the prebuilt extension's front end when its digest is the kernel's, without decoding", async () => {
    const widget = bundleWidget();
    (/** @type {any} */ (globalThis))[PREBUILT] = { digest: DIGEST, default: widget, render: widget.render };
    // a bundle whose code could not be imported: only the prebuilt copy can render this
    const bundle = mockModel({ digest: DIGEST, esm: "", css: ".actx-root{color:red}", encoding: "" });
    const model = mockModel({ _snapshot: snapshotText(0), _bundle: `${REF_PREFIX}b` }, manager({ b: bundle }));
    const loader = createLoader();
    loader.initialize({ model });
    model.emit("msg:custom", batch(1, [pending("hi")]));
    const el = document.createElement("div");
    await loader.render({ model, el });
    expect(el.dataset.text).toBe("hi");
    await vi.waitFor(() => expect(document.head.querySelectorAll(`style[data-agentctx-bundle="${DIGEST}"]`).length).toBe(1));
    expect(prebuiltFor("ffffffffffffffffffffffffffffffff")).toBe(null);
    expect(prebuiltFor(DIGEST)).toBe(widget);
  });

  it("a prebuilt copy of another build is not used", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const other = { render: vi.fn() };
    (/** @type {any} */ (globalThis))[PREBUILT] = { digest: "f".repeat(32), default: other, render: other.render };
    const bundle = mockModel({ digest: DIGEST, esm: "", css: "" });
    const model = mockModel({ _bundle: `${REF_PREFIX}b` }, manager({ b: bundle }));
    const el = document.createElement("div");
    await createLoader().render({ model, el });
    expect(other.render).not.toHaveBeenCalled();
    expect(el.textContent).toContain(`the FrontEndBundle ${DIGEST} holds no code`);
  });

  it("tries once more at render when the bundle could not be found at initialize", async () => {
    const widget = bundleWidget();
    (/** @type {any} */ (globalThis))[MODULES] = new Map([[DIGEST, Promise.resolve({ default: widget })]]);
    const models = {};
    const model = mockModel({ _snapshot: snapshotText(0), _bundle: `${REF_PREFIX}b` }, manager(models));
    const loader = createLoader();
    loader.initialize({ model }); // the FrontEndBundle model is not there yet
    models.b = mockModel({ digest: DIGEST, esm: "export default {}" });
    await loader.render({ model, el: document.createElement("div") });
    expect(widget.rendered.length).toBe(1);
  });

  it("turns the feed off when a second model shares the module (views then ask the kernel)", async () => {
    const widget = bundleWidget();
    (/** @type {any} */ (globalThis))[MODULES] = new Map([[DIGEST, Promise.resolve({ default: widget })]]);
    const bundle = mockModel({ digest: DIGEST, esm: "export default {}" });
    const first = mockModel({ _snapshot: snapshotText(0), _bundle: `${REF_PREFIX}b` }, manager({ b: bundle }));
    const second = mockModel({ _snapshot: snapshotText(0), _bundle: `${REF_PREFIX}b` }, manager({ b: bundle }));
    const loader = createLoader();
    loader.initialize({ model: first });
    loader.initialize({ model: second });
    expect(first.listenerCount()).toBe(0);
    await loader.render({ model: second, el: document.createElement("div") });
    expect(widget.rendered[0].early).toBe(undefined);
    expect(second.sent).toEqual([{ kind: "sync", seq: 0 }]);
  });
});
