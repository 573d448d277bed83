// Every case of the shared vector file (also run by tests/test_delta_vectors.py) against the JS engine.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

import { applyMessage, applyMessageInPlace, DeltaError, newState, parsePath } from "../src/delta.js";

const here = dirname(fileURLToPath(import.meta.url));
const vectors = JSON.parse(readFileSync(join(here, "..", "..", "tests", "vectors", "delta.json"), "utf8"));

/** @param {any} value */
const copy = (value) => JSON.parse(JSON.stringify(value));

describe("delta vectors", () => {
  it("has at least 50 uniquely named cases", () => {
    const names = vectors.map((/** @type {any} */ c) => c.name);
    expect(names.length).toBeGreaterThanOrEqual(50);
    expect(new Set(names).size).toBe(names.length);
  });

  for (const testCase of vectors) {
    it(`pure: ${testCase.name}`, () => {
      const state = copy(testCase.state);
      const message = copy(testCase.message);
      if ("error" in testCase) {
        let caught;
        try {
          applyMessage(state, message);
        } catch (error) {
          caught = error;
        }
        expect(caught).toBeInstanceOf(DeltaError);
        expect(/** @type {DeltaError} */ (caught).code).toBe(testCase.error);
      } else {
        expect(applyMessage(state, message)).toEqual(testCase.expect);
      }
      expect(state).toEqual(testCase.state);
      expect(message).toEqual(testCase.message);
    });

    it(`in place: ${testCase.name}`, () => {
      const state = copy(testCase.state);
      const message = copy(testCase.message);
      if ("error" in testCase) {
        expect(() => applyMessageInPlace(state, message)).toThrow(DeltaError);
        expect(state).toEqual(testCase.state);
      } else {
        applyMessageInPlace(state, message);
        expect(state).toEqual(testCase.expect);
      }
      expect(message).toEqual(testCase.message);
    });
  }
});

describe("delta engine", () => {
  it("parses both index syntaxes to the same segments", () => {
    expect(parsePath("items.0.name")).toEqual(["items", "0", "name"]);
    expect(parsePath("items[0].name")).toEqual(["items", "0", "name"]);
    expect(parsePath("grid[1][2]")).toEqual(["grid", "1", "2"]);
  });

  it("keeps a __proto__ key as plain data", () => {
    let state = applyMessage(newState(), JSON.parse('{"type":"x","id":"m","props":{"__proto__":{"a":1}}}'));
    state = applyMessage(state, JSON.parse(
      '{"type":"x","id":"m","delta":true,"delta_action":"merge","props":{"__proto__":{"b":2}}}'));
    const props = state.messages.m.props;
    expect(Object.getPrototypeOf(props)).toBe(Object.prototype);
    expect(Object.keys(props)).toEqual(["__proto__"]);
    expect(JSON.stringify(props)).toBe('{"__proto__":{"a":1,"b":2}}');
    expect(/** @type {any} */ ({}).b).toBeUndefined();
  });

  it("shares untouched entries with the old state but never writes into them", () => {
    let state = applyMessage(newState(), { type: "text", id: "a", props: { content: "x" } });
    state = applyMessage(state, { type: "text", id: "b", props: { content: "y" } });
    const next = applyMessage(state, { type: "text", id: "a", props: { content: "z" }, delta: true });
    expect(next.messages.b).toBe(state.messages.b);
    expect(state.messages.a.props.content).toBe("x");
    expect(next.messages.a.props.content).toBe("xz");
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
