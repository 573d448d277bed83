// The front end of ContextView's stream protocol (docs/internals.md "ContextView and its stream protocol").
//
// Why: the kernel sends numbered batches of ops at most every 30 ms; custom messages sent before a view
// rendered are lost and are never saved in the notebook. So a store applies batches in sequence, asks
// the kernel for a snapshot on render and on any gap, adopts snapshots newer than itself (from the
// kernel or from the synced `_snapshot` trait, which is all a saved notebook has), and hands the
// renderer at most one update per animation frame.

import { SHARED_SLOT } from "./delta.js";

// The protocol's messages, name for name as agentctx_widgets/widget/protocol_types.py types them
// (docs/internals.md lists the ops; tests/vectors/protocol.json records real sequences).
/**
 * @typedef {import("./delta.js").OutputState} OutputsState the delta engine's state
 * @typedef {Record<string, any>} ContextMessage a Context entry in the seed's shape (never looked into)
 * @typedef {{type: string, props: Record<string, any>, id?: string, delta?: boolean, done?: boolean,
 *   delta_path?: string, delta_action?: string, type_change?: boolean, group_id?: string,
 *   group_start?: boolean, group_end?: boolean, metadata?: Record<string, any>}} OutputMessage
 * @typedef {{name: string, count: number, tokens: number, window: number | null, model: string | null,
 *   rateLimits?: Record<string, string> | null, diagnostics?: Record<string, any>[] | null,
 *   turnCost?: CostValue, contextCost?: CostValue}} Header
 * @typedef {import("./render/cost.js").CostValue} CostValue a Cost with amounts as decimal strings
 * @typedef {{seq: number, header: Header, context: ContextMessage[], pending: ContextMessage | null,
 *   outputs: OutputsState}} ViewState
 *
 * @typedef {{op: "ctx", action: "added" | "updated", index: number, message: ContextMessage}} CtxChangeOp
 * @typedef {{op: "ctx", action: "removed", index: number}} CtxRemovedOp
 * @typedef {{op: "ctx", action: "reset", messages: ContextMessage[]}} CtxResetOp
 * @typedef {CtxChangeOp | CtxRemovedOp | CtxResetOp} CtxOp
 * @typedef {{op: "out", message: OutputMessage}} OutOp
 * @typedef {{op: "pending", message: ContextMessage | null}} PendingOp
 * @typedef {{op: "pending_append", index: number, key: string, text: string}} PendingAppendOp
 * @typedef {{op: "header", header: Header}} HeaderOp
 * @typedef {{op: "clear_output"}} ClearOutputOp
 * @typedef {CtxOp | OutOp | PendingOp | PendingAppendOp | HeaderOp | ClearOutputOp} Op
 *
 * @typedef {{kind: "batch", seq: number, ops: Op[]}} Batch kernel → page: the ops after batch seq - 1
 * @typedef {{kind: "snapshot", seq: number, state: ViewState}} Snapshot kernel → page: the whole state at seq
 * @typedef {Batch | Snapshot} KernelMessage
 * @typedef {{kind: "sync", seq: number}} SyncRequest page → kernel: "send me a snapshot; I am at seq"
 */
/**
 * @typedef {import("./render/index.js").Changes} Changes
 * @typedef {(outputs: OutputsState, message: OutputMessage) => OutputsState} ApplyOut
 */

import { LOG_PREFIX } from "./render/dom.js";

export { LOG_PREFIX };

/** How long to wait before asking again for a snapshot that has not come (ms). */
export const SYNC_RETRY_MS = 1000;

/** @returns {ViewState} */
export function emptyState() {
  return {
    seq: 0,
    header: { name: "context", count: 0, tokens: 0, window: null, model: null },
    context: [],
    pending: null,
    outputs: { order: [], messages: {} },
  };
}

/** Applies batches and snapshots to one state and records what changed since the last render. */
export class ProtocolStore {
  /** @param {ApplyOut} applyOut the JS delta engine (returns the new outputs state) */
  constructor(applyOut) {
    this.applyOut = applyOut;
    /** @type {ViewState} */
    this.state = emptyState();
    /** Whether any snapshot has been adopted (until then even seq 0 is news). */
    this.loaded = false;
    /** @type {Changes} */
    this.changes = {};
    this.dirty = false;
  }

  get seq() {
    return this.state.seq;
  }

  /**
   * Adopt a whole state when it is newer than ours (from a snapshot message or the parsed trait,
   * so it is checked, not trusted: anything without a numeric seq is refused).
   * @param {Partial<ViewState> | null | undefined} state
   * @returns {boolean} whether it was adopted
   */
  adopt(state) {
    if (!state || typeof state.seq !== "number") return false;
    if (this.loaded && state.seq <= this.state.seq) return false;
    this.state = {
      seq: state.seq,
      header: state.header ?? emptyState().header,
      context: Array.isArray(state.context) ? state.context : [],
      pending: state.pending ?? null,
      outputs: state.outputs ?? { order: [], messages: {} },
    };
    this.loaded = true;
    this.changes = { header: true, context: "all", pending: true, outputs: "all" };
    this.dirty = true;
    return true;
  }

  /**
   * Apply one batch if it is the next one.
   * @param {Batch} batch
   * @returns {"applied" | "stale" | "gap" | "failed"}
   */
  applyBatch(batch) {
    if (!this.loaded || batch.seq > this.state.seq + 1) return "gap";
    if (batch.seq <= this.state.seq) return "stale";
    try {
      for (const op of batch.ops) this.applyOp(op);
    } catch (error) {
      // Our state no longer matches the kernel's: only a snapshot can repair it.
      console.warn(LOG_PREFIX, "could not apply batch", batch.seq, error);
      this.loaded = false;
      return "failed";
    }
    this.state.seq = batch.seq;
    return "applied";
  }

  /** @param {Op} op */
  applyOp(op) {
    const state = this.state;
    const changes = this.changes;
    this.dirty = true;
    switch (op.op) {
      case "out": {
        state.outputs = this.applyOut(state.outputs, op.message);
        // an id-less message (or id "") lands in the engine's shared slot, wherever that stands
        addChange(changes, "outputs", op.message.id || SHARED_SLOT);
        return;
      }
      case "pending_append": {
        const block = state.pending?.content?.[op.index];
        if (!block) throw new Error(`pending_append: no pending block ${op.index}`);
        block[op.key] = (typeof block[op.key] === "string" ? block[op.key] : "") + op.text;
        changes.pending = true;
        return;
      }
      case "pending":
        state.pending = op.message ?? null;
        changes.pending = true;
        return;
      case "ctx":
        applyContextOp(state.context, op, changes);
        if (op.action === "reset") state.context = op.messages;
        return;
      case "header":
        state.header = op.header;
        changes.header = true;
        return;
      case "clear_output":
        state.outputs = { order: [], messages: {} };
        changes.outputs = "all";
        return;
      default:
        console.warn(LOG_PREFIX, "unknown op", /** @type {{op?: unknown}} */ (op).op);
    }
  }

  /** @returns {Changes | null} what changed since the last call (null when nothing did) */
  takeChanges() {
    if (!this.dirty) return null;
    const changes = this.changes;
    this.changes = {};
    this.dirty = false;
    return changes;
  }
}

/**
 * @param {ContextMessage[]} context
 * @param {CtxOp} op
 * @param {Changes} changes
 */
function applyContextOp(context, op, changes) {
  const action = op.action;
  if (op.action === "reset") {
    changes.context = "all";
    return;
  }
  const index = op.index;
  if (op.action === "added") {
    if (index < 0 || index > context.length) throw new Error(`ctx added at ${index} of ${context.length}`);
    context.splice(index, 0, op.message);
    if (index === context.length - 1) addChange(changes, "context", index);
    else changes.context = "all";
  } else if (op.action === "updated") {
    if (index < 0 || index >= context.length) throw new Error(`ctx updated at ${index} of ${context.length}`);
    context[index] = op.message;
    addChange(changes, "context", index);
  } else if (op.action === "removed") {
    if (index < 0 || index >= context.length) throw new Error(`ctx removed at ${index} of ${context.length}`);
    context.splice(index, 1);
    changes.context = "all";
  } else {
    throw new Error(`unknown ctx action ${action}`);
  }
}

/**
 * @param {Changes} changes
 * @param {"context" | "outputs"} key
 * @param {any} item
 */
function addChange(changes, key, item) {
  const current = /** @type {"all" | any[] | undefined} */ (changes[key]);
  if (current === "all") return;
  if (current === undefined) changes[key] = /** @type {any} */ ([item]);
  else if (!current.includes(item)) current.push(item);
}

/**
 * Parse the `_snapshot` trait (JSON text); null when empty or unreadable.
 * @param {unknown} text
 * @returns {Partial<ViewState> | null}
 */
export function parseSnapshot(text) {
  if (typeof text !== "string" || text === "") return null;
  try {
    return JSON.parse(text);
  } catch (error) {
    console.warn(LOG_PREFIX, "unreadable _snapshot", error);
    return null;
  }
}

/**
 * The seq of a `_snapshot` JSON text without parsing it (the kernel writes `seq` first), or null.
 * @param {unknown} text
 * @returns {number | null}
 */
export function peekSeq(text) {
  if (typeof text !== "string") return null;
  const match = /^\{"seq":(\d+)[,}]/.exec(text.slice(0, 40));
  return match ? Number(match[1]) : null;
}

/**
 * Whether a comm message is one of ours: a batch (ops a list) or a snapshot, with a numeric seq.
 * Anything else (another library's message on the same comm) is ignored.
 * @param {unknown} value
 * @returns {value is KernelMessage}
 */
export function isKernelMessage(value) {
  if (!value || typeof value !== "object") return false;
  const message = /** @type {{kind?: unknown, seq?: unknown, ops?: unknown}} */ (value);
  if (typeof message.seq !== "number") return false;
  return message.kind === "snapshot" || (message.kind === "batch" && Array.isArray(message.ops));
}

/**
 * Wire an anywidget model to a renderer through a ProtocolStore.
 *
 * @param {{
 *   model: {get(name: string): any, on(event: string, cb: Function): void, off(event: string, cb: Function): void, send(content: SyncRequest): void},
 *   renderer: {update(state: ViewState, changes: Changes): void},
 *   applyOut: ApplyOut,
 *   signal: AbortSignal,
 *   requestFrame?: (cb: () => void) => any,
 *   cancelFrame?: (handle: any) => void,
 *   now?: () => number,
 *   onRendered?: (state: ViewState) => void,
 *   early?: {messages: KernelMessage[], complete: boolean},
 * }} options
 *
 * `early`: kernel messages received before this view rendered (kept by the loader from the model's
 * creation on), applied after the synced `_snapshot` as if they came now. When they are `complete`
 * (nothing dropped since that snapshot) and leave the store loaded, the view asks for no snapshot:
 * it already holds the kernel's state. A gap among them asks, as a gap always does.
 * @returns {ProtocolStore}
 */
export function connect({
  model,
  renderer,
  applyOut,
  signal,
  requestFrame = (cb) => requestAnimationFrame(cb),
  cancelFrame = (handle) => cancelAnimationFrame(handle),
  now = () => Date.now(),
  onRendered = () => {},
  early,
}) {
  const store = new ProtocolStore(applyOut);
  const frames = renderLoop({ store, renderer, signal, requestFrame, cancelFrame, onRendered });
  const asker = new SnapshotAsker(model, store, now);
  /** @param {unknown} received */
  const onCustom = (received) => receiveMessage(received, store, frames.schedule, asker);
  const onSnapshotTrait = () => readSnapshotTrait(model.get("_snapshot"), store, frames.schedule);

  model.on("msg:custom", onCustom);
  model.on("change:_snapshot", onSnapshotTrait);
  signal.addEventListener(
    "abort",
    () => {
      model.off("msg:custom", onCustom);
      model.off("change:_snapshot", onSnapshotTrait);
      frames.cancel();
    },
    { once: true },
  );

  onSnapshotTrait();
  const askedBefore = asker.lastAsk;
  for (const message of early?.messages ?? []) onCustom(message);
  // ask unless the early messages brought the kernel's state, or a gap among them already asked
  if (!(early?.complete && store.loaded) && asker.lastAsk === askedBefore) asker.ask(true);
  return store;
}

/**
 * At most one render per frame: `schedule()` asks for a frame when the store holds news, and the
 * frame hands the renderer what changed; `cancel()` drops a frame not yet run.
 * @param {{store: ProtocolStore, renderer: {update(state: ViewState, changes: Changes): void},
 *   signal: AbortSignal, requestFrame: (cb: () => void) => any, cancelFrame: (handle: any) => void,
 *   onRendered: (state: ViewState) => void}} options
 */
function renderLoop({ store, renderer, signal, requestFrame, cancelFrame, onRendered }) {
  /** @type {any} */
  let frame = null;
  const render = () => {
    frame = null;
    if (signal.aborted) return;
    const changes = store.takeChanges();
    if (!changes) return;
    try {
      renderer.update(store.state, changes);
    } catch (error) {
      console.warn(LOG_PREFIX, "render failed", error);
    }
    onRendered(store.state);
  };
  return {
    schedule() {
      if (frame === null && store.dirty && !signal.aborted) frame = requestFrame(render);
    },
    cancel() {
      if (frame !== null) cancelFrame(frame);
      frame = null;
    },
  };
}

/** Asks the kernel for a snapshot, at most once per SYNC_RETRY_MS unless forced. */
class SnapshotAsker {
  /**
   * @param {{send(content: SyncRequest): void}} model @param {ProtocolStore} store @param {() => number} now
   */
  constructor(model, store, now) {
    this.model = model;
    this.store = store;
    this.now = now;
    /** When the last request was sent (-Infinity: none is awaited). */
    this.lastAsk = -Infinity;
  }

  /** @param {boolean} force send even if a request went out less than SYNC_RETRY_MS ago */
  ask(force) {
    const t = this.now();
    if (!force && t - this.lastAsk < SYNC_RETRY_MS) return;
    this.lastAsk = t;
    try {
      /** @type {SyncRequest} */
      const request = { kind: "sync", seq: this.store.seq };
      this.model.send(request);
    } catch (error) {
      // No kernel (a saved notebook): the `_snapshot` trait is all there is.
      console.debug(LOG_PREFIX, "sync not sent", error);
    }
  }

  /** A snapshot came: the next gap may ask at once. */
  answered() {
    this.lastAsk = -Infinity;
  }
}

/**
 * One custom message from the kernel: adopt a newer snapshot, apply a batch (asking for a snapshot on
 * a gap or a failure); anything that is not ours is ignored.
 * @param {unknown} received @param {ProtocolStore} store @param {() => void} scheduleRender
 * @param {SnapshotAsker} asker
 */
function receiveMessage(received, store, scheduleRender, asker) {
  if (!isKernelMessage(received)) return;
  // A snapshot this view would not adopt (an answer to another view's sync) is not worth copying.
  if (received.kind === "snapshot" && store.loaded && received.seq <= store.seq) {
    asker.answered();
    return;
  }
  // Every view of one model receives the same message object, and the store writes into what it
  // keeps (in-place deltas, pending_append, context splices): each view needs its own copy.
  const message = structuredClone(received);
  if (message.kind === "snapshot") {
    if (store.adopt(message.state)) scheduleRender();
    asker.answered();
  } else if (message.kind === "batch") {
    const result = store.applyBatch(message);
    if (result === "gap" || result === "failed") asker.ask(result === "failed");
    scheduleRender();
  }
}

/**
 * The synced `_snapshot` trait changed (or the view starts): adopt it when it is newer.
 * @param {unknown} text the trait's JSON text @param {ProtocolStore} store @param {() => void} scheduleRender
 */
function readSnapshotTrait(text, store, scheduleRender) {
  // The kernel rewrites the trait each time a stream settles; skip parsing a big state we would not adopt.
  const seq = peekSeq(text);
  if (store.loaded && seq !== null && seq <= store.seq) return;
  if (store.adopt(parseSnapshot(text))) scheduleRender();
}
