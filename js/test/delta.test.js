// Every case of the shared vector file (also run by tests/test_delta_vectors.py) against the JS engine:
// the state after the message (or the DeltaError code) and the diagnostic codes, in order.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

import {
  applyMessage, applyMessageInPlace, DeltaError, newState, parsePath, planMessage, SHARED_SLOT,
} from "../src/delta.js";

const here = dirname(fileURLToPath(import.meta.url));
const vectors = JSON.parse(readFileSync(join(here, "..", "..", "tests", "vectors", "delta.json"), "utf8"));

/** @param {any} value */
const copy = (value) => JSON.parse(JSON.stringify(value));

/** A report that records what it is told. */
function recorder() {
  /** @type {[string, string, Record<string, any>][]} */
  const seen = [];
  /** @param {string} code @param {string} where @param {Record<string, any>} details */
  const report = (code, where, details) => {
    seen.push([code, where, details]);
  };
  return { seen, report, codes: () => seen.map(([code]) => code) };
}

describe("delta vectors", () => {
  it("has at least 200 uniquely named cases", () => {
    const names = vectors.map((/** @type {any} */ c) => c.name);
    expect(names.length).toBeGreaterThanOrEqual(200);
    expect(new Set(names).size).toBe(names.length);
  });

  for (const testCase of vectors) {
    it(`pure: ${testCase.name}`, () => {
      const state = copy(testCase.state);
      const message = copy(testCase.message);
      const { report, codes } = recorder();
      if ("error" in testCase) {
        let caught;
        try {
          applyMessage(state, message, report);
        } catch (error) {
          caught = error;
        }
        expect(caught).toBeInstanceOf(DeltaError);
        expect(/** @type {DeltaError} */ (caught).code).toBe(testCase.error);
      } else {
        expect(applyMessage(state, message, report)).toEqual(testCase.expect);
      }
      expect(codes()).toEqual(testCase.diagnostics ?? []);
      expect(state).toEqual(copy(testCase.state));
      expect(message).toEqual(copy(testCase.message));
    });

    it(`in place: ${testCase.name}`, () => {
      const state = copy(testCase.state);
      const message = copy(testCase.message);
      const { report, codes } = recorder();
      if ("error" in testCase) {
        expect(() => applyMessageInPlace(state, message, report)).toThrow(DeltaError);
        expect(state).toEqual(copy(testCase.state));
      } else {
        applyMessageInPlace(state, message, report);
        expect(state).toEqual(testCase.expect);
        const quiet = copy(testCase.state);
        applyMessageInPlace(quiet, copy(testCase.message)); // the front end calls it without a report
        expect(quiet).toEqual(testCase.expect);
      }
      expect(codes()).toEqual(testCase.diagnostics ?? []);
      expect(message).toEqual(copy(testCase.message));
    });
  }
});

describe("delta engine", () => {
  it("parses paths as the client does: one [n] per part, anything else a literal key", () => {
    expect(parsePath("items.0.name").map((p) => [p.key, p.index, p.literal])).toEqual([
      ["items", null, false], ["0", null, false], ["name", null, false]]);
    expect(parsePath("items[01].name").map((p) => [p.key, p.index, p.literal])).toEqual([
      ["items", "1", false], ["name", null, false]]);
    expect(parsePath("grid[1][2]").map((p) => [p.key, p.literal])).toEqual([["grid[1][2]", true]]);
    expect(parsePath("a..b").map((p) => p.key)).toEqual(["a", "", "b"]);
  });

  it("reports where and what, during planning, before anything is applied", () => {
    const state = applyMessage(newState(), { type: "text", id: "m", props: { content: "Hello" } });
    const { seen, report } = recorder();
    const change = planMessage(state, { type: "text", id: "m", delta: true, delta_path: "content", props: { content: 5 } }, report);
    expect(seen).toEqual([["append_coerced", "message 'm' props.content",
      { kind: "number", path: "props.content", text: "5" }]]);
    expect(state.messages.m.props.content).toBe("Hello");
    expect(change.mode).toBe("delta");
  });

  it("gives every id-less message the one shared slot", () => {
    const { codes, report } = recorder();
    let state = applyMessage(newState(), { type: "text", props: { content: "a" } }, report);
    state = applyMessage(state, { type: "text", id: "b", props: { content: "b" } }, report);
    state = applyMessage(state, { type: "loading", id: "", props: { message: "c" } }, report);
    expect(state.order).toEqual([SHARED_SLOT, "b"]);
    expect(state.messages[SHARED_SLOT]).toEqual({ id: SHARED_SLOT, type: "loading", props: { message: "c" }, done: false });
    expect(codes()).toEqual(["shared_slot"]);
  });

  it("changes nothing for a message the client drops, and reports only that", () => {
    const state = applyMessage(newState(), { type: "x", id: "m", props: { n: 5 } });
    const { seen, report } = recorder();
    const next = applyMessage(state, { type: "y", id: "m", delta: true, delta_path: "n.x", delta_action: "set",
      props: { n: { x: 1 } }, done: true }, report);
    expect(next).toEqual(state);
    expect(seen.map(([code]) => code)).toEqual(["dropped"]);
    expect(seen[0][2].reason).toContain("props.n is a number");
  });

  it("keeps a __proto__ key as plain data", () => {
    let state = applyMessage(newState(), JSON.parse('{"type":"x","id":"m","props":{"__proto__":{"a":1}}}'));
    state = applyMessage(state, JSON.parse(
      '{"type":"x","id":"m","delta":true,"delta_action":"merge","props":{"__proto__":{"b":2}}}'));
    state = applyMessage(state, JSON.parse(
      '{"type":"x","id":"m","delta":true,"delta_path":"__proto__.c","delta_action":"set","props":{"__proto__":{"c":3}}}'));
    const props = state.messages.m.props;
    expect(Object.getPrototypeOf(props)).toBe(Object.prototype);
    expect(Object.keys(props)).toEqual(["__proto__"]);
    expect(JSON.stringify(props)).toBe('{"__proto__":{"a":1,"b":2,"c":3}}');
    expect(/** @type {any} */ ({}).b).toBeUndefined();
    expect(/** @type {any} */ ({}).c).toBeUndefined();
  });

  it("shares untouched entries with the old state but never writes into them", () => {
    let state = applyMessage(newState(), { type: "text", id: "a", props: { content: "x" } });
    state = applyMessage(state, { type: "text", id: "b", props: { content: "y" } });
    const next = applyMessage(state, { type: "text", id: "a", props: { content: "z" }, delta: true });
    expect(next.messages.b).toBe(state.messages.b);
    expect(state.messages.a.props.content).toBe("x");
    expect(next.messages.a.props.content).toBe("xz");
  });

  it("rejects what is not JSON or not a message, and only that", () => {
    for (const bad of [null, "text", { props: {} }, { type: "text", props: { n: NaN } }, { type: "text", props: [] },
      { type: "text", id: 3 }, { type: "text", delta: "yes" }, { type: "text", delta_action: 3 },
      { type: "text", metadata: { at: new Date() } }]) {
      expect(() => applyMessage(newState(), bad)).toThrow(DeltaError);
    }
    expect(() => applyMessage({ order: {}, messages: {} }, { type: "text" })).toThrow(DeltaError);
  });

  it("plans the stream's own shape (text onto an open text) as one concat, reporting nothing", () => {
    const state = applyMessage(newState(), { type: "text", id: "m", props: { content: "Hello", n: 1 } });
    const append = { type: "text", id: "m", props: { content: " world" }, delta: true, delta_path: "content",
      delta_action: "append" };
    const { seen, report } = recorder();
    const change = planMessage(state, append, report);
    expect(change).toEqual({ id: "m", groupId: null, metadata: null, isNew: false, type: "text", mode: "delta",
      fresh: false, value: [["concat", ["content"], " world"]], done: false });
    expect(seen).toEqual([]);
    expect(state.messages.m.props).toEqual({ content: "Hello", n: 1 }); // planning never writes
    applyMessageInPlace(state, { ...append, type: "" }); // "" never switches the type
    expect(state.messages.m).toEqual({ id: "m", type: "text", props: { content: "Hello world", n: 1 }, done: false });
  });

  it("leaves every case around that shape to the planner, with its diagnostics", () => {
    const open = applyMessage(newState(), { type: "text", id: "m", props: { content: "a", n: 1 } });
    const done = applyMessage(open, { type: "text", id: "m", done: true });
    const append = { type: "text", id: "m", props: { content: "b" }, delta: true, delta_path: "content" };
    /** @type {[any, any, string[], Record<string, any>][]} */
    const cases = [
      [done, append, ["after_done"], { content: "b" }],
      [open, { ...append, type: "thinking" }, ["type_changed"], { content: "ab", n: 1 }],
      [open, { ...append, type_change: true }, [], { content: "b" }],
      [open, { ...append, id: "x" }, ["unknown_id"], { content: "b" }],
      [open, { ...append, delta_path: "n", props: { n: "b" } }, ["append_replaced"], { content: "a", n: "b" }],
      [open, { ...append, props: { content: 5 } }, ["append_coerced"], { content: "a5", n: 1 }],
    ];
    for (const [state, message, expectedCodes, props] of cases) {
      const { codes, report } = recorder();
      const next = applyMessage(state, message, report);
      expect(codes()).toEqual(expectedCodes);
      expect(next.messages[message.id].props).toEqual(props);
    }
  });

  it("streams 10,000 appends in place", () => {
    const state = newState();
    applyMessageInPlace(state, { type: "text", id: "m", props: { content: "" } });
    for (let i = 0; i < 10000; i++) {
      applyMessageInPlace(state, { type: "text", id: "m", props: { content: "ab" }, delta: true, delta_path: "content" });
    }
    expect(state.messages.m.props.content.length).toBe(20000);
    expect(state.order).toEqual(["m"]);
  });
});
