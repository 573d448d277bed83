import { describe, expect, it, vi } from "vitest";
import { applyMessageInPlace } from "../src/delta.js";
import { connect, emptyState, peekSeq, ProtocolStore, SYNC_RETRY_MS } from "../src/protocol.js";

/** The real delta engine, wired as js/src/index.js wires it: in place, on the store's own copy. */
function applyOut(outputs, message) {
  applyMessageInPlace(outputs, message);
  return outputs;
}

/** An anywidget-like model whose sends are recorded and whose events the test fires. */
function mockModel(snapshot = "") {
  const listeners = new Map();
  const traits = { _snapshot: snapshot };
  return {
    sent: [],
    get: (name) => traits[name],
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
      for (const cb of listeners.get(event) ?? []) cb(...args);
    },
    setTrait(name, value) {
      traits[name] = value;
      this.emit(`change:${name}`);
    },
    listenerCount: () => [...listeners.values()].reduce((n, set) => n + set.size, 0),
  };
}

/** Frames run only when the test says so. */
function manualFrames() {
  const queue = [];
  return {
    requestFrame: (cb) => {
      queue.push(cb);
      return queue.length;
    },
    cancelFrame: () => queue.splice(0),
    run() {
      const due = queue.splice(0);
      for (const cb of due) cb();
      return due.length;
    },
    get pending() {
      return queue.length;
    },
  };
}

function setup(snapshot = "", clock = { t: 0 }) {
  const model = mockModel(snapshot);
  const updates = [];
  const renderer = { update: (state, changes) => updates.push({ state: structuredClone(state), changes }) };
  const frames = manualFrames();
  const controller = new AbortController();
  const store = connect({
    model,
    renderer,
    applyOut,
    signal: controller.signal,
    requestFrame: frames.requestFrame,
    cancelFrame: frames.cancelFrame,
    now: () => clock.t,
  });
  return { model, updates, frames, controller, store, clock };
}

const snapshotOf = (seq, extra = {}) => ({ ...emptyState(), seq, ...extra });
const text = (id, content) => ({ op: "out", message: { id, type: "text", props: { content } } });
const append = (id, content) => ({
  op: "out",
  message: { id, type: "text", props: { content }, delta: true, delta_path: "content", delta_action: "append" },
});

describe("connect", () => {
  it("asks for a snapshot on render and renders it on the next frame", () => {
    const { model, updates, frames } = setup();
    expect(model.sent).toEqual([{ kind: "sync", seq: 0 }]);
    model.emit("msg:custom", { kind: "snapshot", seq: 4, state: snapshotOf(4, { context: [{ type: 2, content: [] }] }) });
    expect(updates).toHaveLength(0);
    frames.run();
    expect(updates).toHaveLength(1);
    expect(updates[0].changes).toEqual({ header: true, context: "all", pending: true, outputs: "all" });
    expect(updates[0].state.seq).toBe(4);
  });

  it("renders from the _snapshot trait with no kernel (saved notebook)", () => {
    const saved = JSON.stringify(snapshotOf(7, { outputs: { order: ["m"], messages: { m: { id: "m", type: "text", props: { content: "saved" }, done: true } } } }));
    const { updates, frames, store } = setup(saved);
    frames.run();
    expect(store.seq).toBe(7);
    expect(updates[0].state.outputs.messages.m.props.content).toBe("saved");
  });

  it("applies consecutive batches and renders at most once per frame", () => {
    const { model, updates, frames } = setup();
    model.emit("msg:custom", { kind: "snapshot", seq: 0, state: snapshotOf(0) });
    model.emit("msg:custom", { kind: "batch", seq: 1, ops: [text("m", "a")] });
    model.emit("msg:custom", { kind: "batch", seq: 2, ops: [append("m", "b")] });
    model.emit("msg:custom", { kind: "batch", seq: 3, ops: [append("m", "c"), text("n", "x")] });
    expect(frames.pending).toBe(1);
    frames.run();
    expect(updates).toHaveLength(1);
    expect(updates[0].state.outputs.messages.m.props.content).toBe("abc");
    expect(updates[0].changes).toEqual({ header: true, context: "all", pending: true, outputs: "all" });
    model.emit("msg:custom", { kind: "batch", seq: 4, ops: [append("n", "y")] });
    frames.run();
    expect(updates[1].changes).toEqual({ outputs: ["n"] });
    expect(updates[1].state.seq).toBe(4);
  });

  it("on a gap asks for a snapshot once, drops batches until it comes, then resumes", () => {
    const clock = { t: 0 };
    const { model, frames, store } = setup("", clock);
    model.emit("msg:custom", { kind: "snapshot", seq: 1, state: snapshotOf(1) });
    model.sent.length = 0;
    clock.t = 5000;
    model.emit("msg:custom", { kind: "batch", seq: 3, ops: [text("m", "lost")] });
    model.emit("msg:custom", { kind: "batch", seq: 4, ops: [append("m", "!")] });
    expect(model.sent).toEqual([{ kind: "sync", seq: 1 }]);
    expect(store.seq).toBe(1);
    clock.t += SYNC_RETRY_MS;
    model.emit("msg:custom", { kind: "batch", seq: 5, ops: [] });
    expect(model.sent).toHaveLength(2); // asked again: the first answer did not come in time
    const kernel = snapshotOf(5, { outputs: { order: ["m"], messages: { m: { id: "m", type: "text", props: { content: "lost!" }, done: false } } } });
    model.emit("msg:custom", { kind: "snapshot", seq: 5, state: kernel });
    model.emit("msg:custom", { kind: "batch", seq: 6, ops: [append("m", "?")] });
    frames.run();
    expect(store.state.outputs.messages.m.props.content).toBe("lost!?");
    expect(store.seq).toBe(6);
  });

  it("ignores stale batches and snapshots older than itself", () => {
    const { model, store } = setup();
    model.emit("msg:custom", { kind: "snapshot", seq: 2, state: snapshotOf(2) });
    model.emit("msg:custom", { kind: "batch", seq: 3, ops: [text("m", "a")] });
    model.emit("msg:custom", { kind: "batch", seq: 3, ops: [append("m", "DUP")] });
    model.emit("msg:custom", { kind: "snapshot", seq: 2, state: snapshotOf(2) });
    model.setTrait("_snapshot", JSON.stringify(snapshotOf(1)));
    expect(store.seq).toBe(3);
    expect(store.state.outputs.messages.m.props.content).toBe("a");
  });

  it("a live _snapshot trait newer than the view is adopted (a view that fell behind)", () => {
    const { model, store } = setup();
    model.emit("msg:custom", { kind: "snapshot", seq: 1, state: snapshotOf(1) });
    model.setTrait("_snapshot", JSON.stringify(snapshotOf(9, { header: { name: "later", count: 0, tokens: 0, window: null, model: null } })));
    expect(store.seq).toBe(9);
    expect(store.state.header.name).toBe("later");
  });

  it("a batch that cannot be applied asks for a snapshot at once", () => {
    const { model, store } = setup();
    model.emit("msg:custom", { kind: "snapshot", seq: 0, state: snapshotOf(0) });
    model.sent.length = 0;
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    // a message with no type is not a message: the engine throws, the store cannot follow the kernel
    model.emit("msg:custom", { kind: "batch", seq: 1, ops: [{ op: "out", message: { id: "x", props: {} } }] });
    warn.mockRestore();
    expect(model.sent).toEqual([{ kind: "sync", seq: 0 }]);
    expect(store.loaded).toBe(false);
  });

  it("removing the view removes every listener and the pending frame", () => {
    const { model, controller, frames, updates } = setup();
    expect(model.listenerCount()).toBe(2);
    model.emit("msg:custom", { kind: "snapshot", seq: 1, state: snapshotOf(1) });
    controller.abort();
    expect(model.listenerCount()).toBe(0);
    frames.run();
    expect(updates).toHaveLength(0);
  });

  it("two views of one model, fed the same message objects, converge without applying anything twice", () => {
    const model = mockModel();
    // the real engine writes appends into the stored entry: a shared object would get them twice
    const stores = [0, 1].map(() =>
      connect({ model, renderer: { update() {} }, applyOut, signal: new AbortController().signal, requestFrame: () => 1 }),
    );
    const pending = { type: 3, content: [{ type: "text", text: "a" }] };
    model.emit("msg:custom", {
      kind: "snapshot",
      seq: 1,
      state: snapshotOf(1, { context: [], pending, outputs: { order: ["m"], messages: { m: { id: "m", type: "text", props: { content: "x" }, done: false } } } }),
    });
    model.emit("msg:custom", {
      kind: "batch",
      seq: 2,
      ops: [
        { op: "pending_append", index: 0, key: "text", text: "b" },
        { op: "ctx", action: "added", index: 0, message: { type: 2, content: [] } },
        append("m", "y"),
      ],
    });
    for (const store of stores) {
      expect(store.state.pending.content[0].text).toBe("ab");
      expect(store.state.context).toHaveLength(1);
      expect(store.state.outputs.messages.m.props.content).toBe("xy");
    }
    expect(pending.content[0].text).toBe("a"); // the received message itself is never written into
  });

  it("ignores comm messages that are not a batch or snapshot with a numeric seq", () => {
    const { model, store, frames } = setup();
    model.emit("msg:custom", { kind: "snapshot", seq: 1, state: snapshotOf(1) });
    model.sent.length = 0;
    for (const foreign of [null, "text", { kind: "batch", ops: [text("m", "x")] }, { kind: "batch", seq: 2, ops: "x" }, { kind: "other", seq: 2 }]) {
      model.emit("msg:custom", foreign);
    }
    frames.run();
    expect(store.seq).toBe(1);
    expect(store.state.outputs).toEqual({ order: [], messages: {} });
    expect(model.sent).toEqual([]); // not taken for a gap either
  });

  it("survives a model whose send throws (no kernel)", () => {
    const model = mockModel(JSON.stringify(snapshotOf(3)));
    model.send = () => {
      throw new Error("no comm");
    };
    const debug = vi.spyOn(console, "debug").mockImplementation(() => {});
    const store = connect({ model, renderer: { update() {} }, applyOut, signal: new AbortController().signal, requestFrame: () => 1 });
    debug.mockRestore();
    expect(store.seq).toBe(3);
  });
});

describe("ProtocolStore ops", () => {
  function loaded() {
    const store = new ProtocolStore(applyOut);
    store.adopt(snapshotOf(0, { context: [{ type: 2, content: [{ type: "text", text: "hi" }] }] }));
    store.takeChanges();
    return store;
  }

  it("context ops insert, update and remove, and report what changed", () => {
    const store = loaded();
    const m = (text) => ({ type: 3, content: [{ type: "text", text }] });
    store.applyBatch({ seq: 1, ops: [{ op: "ctx", action: "added", index: 1, message: m("a") }, { op: "ctx", action: "updated", index: 0, message: m("b") }] });
    expect(store.state.context.map((x) => x.content[0].text)).toEqual(["b", "a"]);
    expect(store.takeChanges()).toEqual({ context: [1, 0] });
    store.applyBatch({ seq: 2, ops: [{ op: "ctx", action: "removed", index: 0 }] });
    expect(store.state.context.map((x) => x.content[0].text)).toEqual(["a"]);
    expect(store.takeChanges()).toEqual({ context: "all" });
    store.applyBatch({ seq: 3, ops: [{ op: "ctx", action: "reset", messages: [m("x"), m("y")] }] });
    expect(store.state.context).toHaveLength(2);
  });

  it("marks the shared slot as changed for an id-less output, wherever the slot stands", () => {
    const store = loaded();
    const out = (message) => ({ op: "out", message });
    store.applyBatch({ seq: 1, ops: [out({ type: "text", props: { content: "a" } }), out({ type: "text", id: "m", props: { content: "b" } })] });
    store.takeChanges();
    store.applyBatch({ seq: 2, ops: [out({ type: "text", id: "", props: { content: "c" } })] });
    expect(store.state.outputs.order).toEqual(["ai-response-unknown", "m"]);
    expect(store.state.outputs.messages["ai-response-unknown"].props).toEqual({ content: "c" });
    expect(store.takeChanges()).toEqual({ outputs: ["ai-response-unknown"] });
  });

  it("pending, pending_append, header and clear_output", () => {
    const store = loaded();
    store.applyBatch({
      seq: 1,
      ops: [
        { op: "pending", message: { type: 3, content: [{ type: "text", text: "Hel" }] } },
        { op: "pending_append", index: 0, key: "text", text: "lo" },
        { op: "header", header: { name: "n", count: 1, tokens: 2, window: 100, model: "m" } },
        text("o", "x"),
        { op: "clear_output" },
      ],
    });
    expect(store.state.pending.content[0].text).toBe("Hello");
    expect(store.state.header.window).toBe(100);
    expect(store.state.outputs).toEqual({ order: [], messages: {} });
    expect(store.takeChanges()).toEqual({ pending: true, header: true, outputs: "all" });
    store.applyBatch({ seq: 2, ops: [{ op: "pending", message: null }] });
    expect(store.state.pending).toBeNull();
  });
});

describe("peekSeq", () => {
  it("reads the leading seq of a snapshot text and nothing else", () => {
    expect(peekSeq('{"seq":12,"header":{}}')).toBe(12);
    expect(peekSeq('{"seq":0}')).toBe(0);
    expect(peekSeq('{"header":{"seq":3}}')).toBeNull();
    expect(peekSeq("")).toBeNull();
    expect(peekSeq(undefined)).toBeNull();
  });

  it("a trait snapshot no newer than the view is not parsed", () => {
    const { model, store } = setup();
    model.emit("msg:custom", { kind: "snapshot", seq: 5, state: snapshotOf(5) });
    const parse = vi.spyOn(JSON, "parse");
    model.setTrait("_snapshot", JSON.stringify(snapshotOf(5)));
    expect(parse).not.toHaveBeenCalled();
    model.setTrait("_snapshot", JSON.stringify(snapshotOf(6)));
    expect(parse).toHaveBeenCalledTimes(1);
    parse.mockRestore();
    expect(store.seq).toBe(6);
  });
});
