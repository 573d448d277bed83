// The delta engine: how a stream of output messages folds into a state (DESIGN.md "Output messages
// and deltas"). Mirrors agentctx_widgets/output/delta.py rule for rule, diagnostic for diagnostic (same
// codes, same order, same `where`); tests/vectors/delta.json binds both. Plain ESM, no dependencies.
//
// State: {order: [id], messages: {id: {id, type, props, done, group_id?, metadata?}}}.
// Every message is first planned (all checks and every diagnostic, reading only), then committed
// (writes only), so a bad message never half-applies and a strict caller can refuse it first.
// applyMessage is pure (returns a new state that shares unchanged entries with the old one; treat
// states as immutable); applyMessageInPlace updates a state the caller owns at the message's cost.
//
// The rules are those of the reference CUI client, YaoApp/cui at 9c35de9 (chatbox/utils/delta.ts and
// the message loop of chatbox/hooks/useChat.ts); delta.py's docstring lists them with the diagnostic
// each surprising case reports through `report(code, where, details)`. In short: id-less messages
// (and id "") share the slot "ai-response-unknown" (shared_slot); a delta for an unknown id creates
// the message (unknown_id); a message after done starts afresh and reopens (after_done); type_change
// with an id restarts from empty props; a delta of another type switches the type (type_changed);
// done is the value on each message; append onto a string is JavaScript's + (append_coerced), onto a
// list extends, onto anything else replaces (append_replaced); merge is the client's deepMerge
// (merge_ignored, merge_list_by_index); a value missing from the sent props is undefined
// (missing_value); paths are the client's (path_literal, path_overwrote, path_made_object,
// list_padded, list_key_ignored); a message the client throws on changes nothing (dropped); an unknown
// action changes no props (invalid_action). One deliberate difference: a bare done (done, no delta,
// props {} or absent) keeps the props as the seed's example shows (bare_done_kept when there were
// props to keep); group_id/metadata are kept, events stored, keys are plain data (own properties).
// DeltaError ("invalid_state", "invalid_message") is only for what is not a state or not a message
// (a missing type is; "" is a type, as in Yao, and a delta never switches to it).

/**
 * @typedef {{id: string, type: string, props: Record<string, any>, done: boolean,
 *   group_id?: string, metadata?: Record<string, any>}} OutputEntry
 * @typedef {{order: string[], messages: Record<string, OutputEntry>}} OutputState
 * @typedef {{id: string, isNew: boolean, type: string, mode: string, fresh: boolean, value: any,
 *   done: boolean, groupId: string | null, metadata: Record<string, any> | null}} Change
 * @typedef {(code: string, where: string, details: Record<string, any>) => void} Report
 * @typedef {{raw: string, key: string, index: string | null, literal: boolean}} PathPart
 * @typedef {[any[] | null, any, string]} Node  [path in the props (null: nowhere visible), value, text]
 * @typedef {{kind: string, path: any[] | null, listLen: number | null, index: number | null,
 *   text: string, key: string}} Loc
 */

/** The id the client gives every message without one (useChat.ts: chunk.id || 'ai-response-unknown'). */
export const SHARED_SLOT = "ai-response-unknown";

export const KNOWN_ACTIONS = Object.freeze(["append", "replace", "merge", "set"]);

/** JavaScript's undefined as a value the engine passes around (what a read finds where there is nothing). */
const UNDEFINED = Symbol("undefined");

const PART = /^([A-Za-z0-9_]+)(?:\[([0-9]+)\])?$/;
const INDEX = /^(?:0|[1-9][0-9]*)$/;
const DIGITS = /^[0-9]+$/;
const PLAIN = /^[A-Za-z0-9_]+$/;
const MAX_INDEX = 4294967294;
const HIDDEN = "hidden";
const LENGTH = "length";
const PATH = "path";

/** A message that is not a message, or a state that is not a state; `code` says which. */
export class DeltaError extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.name = "DeltaError";
    this.code = code;
  }
}

/** The client throws (a TypeError or RangeError) on this message and drops it. */
class Drop extends Error {
  /** @param {string} reason */
  constructor(reason) {
    super(reason);
    this.reason = reason;
  }
}

/** @returns {OutputState} */
export function newState() {
  return { order: [], messages: {} };
}

/** @param {any} value @returns {value is Record<string, any>} */
function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** @param {any} obj @param {string} key */
function has(obj, key) {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/** Own-property write that is safe for any key, "__proto__" included.
 * @param {any} obj @param {string | number} key @param {any} value */
function put(obj, key, value) {
  if (key === "__proto__") {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/** A deep copy of JSON-like data. @param {any} value @returns {any} */
export function cloneJson(value) {
  if (Array.isArray(value)) return value.map(cloneJson);
  if (isObject(value)) {
    /** @type {Record<string, any>} */
    const out = {};
    for (const key of Object.keys(value)) put(out, key, cloneJson(value[key]));
    return out;
  }
  return value;
}

// ---- JavaScript semantics for JSON values (native here; emulated in delta.py) ---------------------

/** @param {string} key */
function isIndex(key) {
  return INDEX.test(key) && (key.length < 10 || Number(key) <= MAX_INDEX);
}

/** ToString of a JSON value; a Drop where the client's `+` throws (an own "toString" key).
 * @param {any} value @returns {string} */
export function jsString(value) {
  if (value === UNDEFINED) return "undefined";
  try {
    return String(value);
  } catch {
    throw new Drop("the client cannot turn an object with a 'toString' key into text (TypeError)");
  }
}

/** @param {any} value */
function toNumber(value) {
  if (value === UNDEFINED) return NaN;
  if (value !== null && typeof value === "object") {
    const text = jsString(value);
    return Array.isArray(value) ? Number(text) : NaN;
  }
  return Number(value);
}

/** @param {any} value */
function truthy(value) {
  return value !== UNDEFINED && Boolean(value);
}

/** A value's type as the diagnostics name it: the same words as the Python engine's
 * (agentctx_widgets/_js_types.py `js_type`). @param {any} value */
function kind(value) {
  if (value === UNDEFINED) return "undefined";
  if (value === null) return "null";
  if (Array.isArray(value)) return "list";
  if (typeof value === "object") return "object";
  return typeof value;
}

/** @param {any} value */
function jsonText(value) {
  return typeof value === "string" ? JSON.stringify(value) : jsString(value);
}

/** `value?.[key]` for JSON data, own properties only. @param {any} value @param {string} key @returns {any} */
function get(value, key) {
  if (Array.isArray(value)) {
    if (isIndex(key)) {
      const index = Number(key);
      return index < value.length ? value[index] : UNDEFINED;
    }
    return key === "length" ? value.length : UNDEFINED;
  }
  if (isObject(value)) return has(value, key) ? value[key] : UNDEFINED;
  if (typeof value === "string") {
    if (key === "length") return value.length;
    if (!isIndex(key)) return UNDEFINED;
    const index = Number(key);
    return index < value.length ? value[index] : UNDEFINED;
  }
  return UNDEFINED;
}

/** DeltaError unless `value` is plain JSON data. @param {any} value @param {string} where */
function checkJson(value, where) {
  if (isFlatJson(value)) return; // the common case: a few strings (a streamed delta)
  /** @type {[any, string][]} */
  const stack = [[value, where]];
  while (stack.length > 0) {
    const [item, at] = /** @type {[any, string]} */ (stack.pop());
    if (item === null || typeof item === "string" || typeof item === "boolean") continue;
    if (typeof item === "number") {
      if (Number.isFinite(item)) continue;
      throw invalid(`${at} is ${item}, which JSON cannot carry`);
    }
    if (Array.isArray(item)) {
      item.forEach((child, index) => stack.push([child, `${at}[${index}]`]));
    } else if (isObject(item) && (Object.getPrototypeOf(item) === Object.prototype || Object.getPrototypeOf(item) === null)) {
      for (const key of Object.keys(item)) stack.push([item[key], `${at}.${key}`]);
    } else {
      throw invalid(`${at} is a ${typeof item}, which JSON cannot carry`);
    }
  }
}

/** A plain object whose values are all JSON scalars: nothing to walk. @param {any} value */
function isFlatJson(value) {
  if (!isObject(value)) return false;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (!(item === null || typeof item === "string" || typeof item === "boolean"
      || (typeof item === "number" && Number.isFinite(item)))) return false;
  }
  return true;
}

// ---- paths -------------------------------------------------------------------------------------------

/** @type {Map<string, PathPart[]>} */
const PATHS = new Map();

/** @param {string} digits parseInt(digits) as a property key */
function bracketKey(digits) {
  return String(parseInt(digits, 10));
}

/** The parts of a delta_path as the client reads it ("items[0].name" → items index 0, then name).
 * @param {string} path @returns {PathPart[]} */
export function parsePath(path) {
  let parts = PATHS.get(path);
  if (parts === undefined) {
    parts = path.split(".").map((raw) => {
      const match = PART.exec(raw);
      if (match === null) return { raw, key: raw, index: null, literal: true };
      return { raw, key: match[1], index: match[2] === undefined ? null : bracketKey(match[2]), literal: false };
    });
    if (PATHS.size >= 1024) PATHS.clear();
    PATHS.set(path, parts);
  }
  return parts;
}

// ---- planning -------------------------------------------------------------------------------------

/** @param {any[] | null} path @param {any} key */
function sub(path, key) {
  return path === null ? null : [...path, key];
}

/** @param {string} kind @param {any[] | null} path @param {number | null} listLen @param {number | null} index
 * @param {string} text @param {string} key @returns {Loc} */
function loc(kind, path, listLen, index, text, key) {
  return { kind, path, listLen, index, text, key };
}

/** @param {any} target */
function removes(target) {
  return target === UNDEFINED ? "nothing is written there" : "the value there is removed";
}

/** Runs the client's code for one message against a read-only state, recording write ops. */
class Planner {
  /** @param {string} name */
  constructor(name) {
    this.base = `message '${name}'`;
    /** @type {[string, string, Record<string, any>][]} */
    this.notes = [];
    /** @type {any[][]} */
    this.ops = [];
  }

  /** @param {string} code @param {string | null} where @param {Record<string, any>} details */
  note(code, where, details) {
    this.notes.push([code, where === null ? this.base : `${this.base} ${where}`, details]);
  }

  /** Where `node[key] = ...` writes; throws Drop when the client throws.
   * @param {Node} node @param {string} key @param {string} text @returns {Loc} */
  locate(node, key, text) {
    const [path, value, at] = node;
    if (value === UNDEFINED || value === null) {
      throw new Drop(`${at} does not exist, so the client cannot set ${text} (TypeError)`);
    }
    if (Array.isArray(value)) {
      if (isIndex(key)) {
        const index = Number(key);
        return loc(PATH, sub(path, index), value.length, index, text, key);
      }
      if (path === null) return loc(PATH, null, null, null, text, key);
      return loc(key === "length" ? LENGTH : HIDDEN, path, value.length, null, text, key);
    }
    if (isObject(value)) return loc(PATH, sub(path, key), null, null, text, key);
    throw new Drop(`${at} is a ${kind(value)}, so the client cannot set ${text} (TypeError)`);
  }

  /** `node[key] = node[key] || ({} or [])`; returns the node for node[key].
   * @param {Node} node @param {string} key @param {boolean} makeList @param {string} text
   * @param {string | null} madeObjectKey @returns {Node} */
  ensure(node, key, makeList, text, madeObjectKey) {
    const [, value, at] = node;
    if (value === UNDEFINED || value === null) {
      throw new Drop(`${at} does not exist, so the client cannot reach ${text} (TypeError)`);
    }
    const current = get(value, key);
    if (truthy(current)) {
      if (value === null || typeof value !== "object") {
        throw new Drop(`${at} is a ${kind(value)}, so the client cannot set ${text} (TypeError)`);
      }
      const where = this.locate(node, key, text);
      return [where.kind === PATH ? where.path : null, current, text];
    }
    const where = this.locate(node, key, text);
    if (where.kind === LENGTH) throw new Drop(`the client cannot use the length of ${at} as a container (RangeError)`);
    const fresh = makeList ? [] : {};
    if (where.kind === HIDDEN) {
      this.note("list_key_ignored", text, { path: text, key });
      return [null, fresh, text];
    }
    if (where.path === null) return [null, fresh, text];
    if (current !== UNDEFINED) this.note("path_overwrote", text, { path: text, kind: kind(current) });
    if (madeObjectKey !== null) {
      const made = `${text}.${madeObjectKey}`;
      this.note("path_made_object", made, { path: made, key: madeObjectKey });
    }
    this.padded(where);
    this.ops.push(["ensure", where.path, makeList]);
    return [where.path, fresh, text];
  }

  /** @param {Loc} where */
  padded(where) {
    if (where.listLen !== null && where.index !== null && where.index > where.listLen) {
      this.note("list_padded", where.text, { path: where.text, length: where.listLen });
    }
  }

  /** @param {Loc} where @param {any} value */
  put(where, value) {
    if (where.kind === HIDDEN) {
      this.note("list_key_ignored", where.text, { path: where.text, key: where.key });
      return;
    }
    if (where.path === null) return;
    if (where.kind === LENGTH) {
      const number = toNumber(value);
      if (!(Number.isFinite(number) && number >= 0 && Number.isInteger(number) && number <= 4294967295)) {
        throw new Drop(`the client cannot set ${where.text} to ${jsString(value)} (RangeError)`);
      }
      if (number > /** @type {number} */ (where.listLen)) {
        this.note("list_padded", where.text, { path: where.text, length: where.listLen });
      }
      this.ops.push(["length", where.path, number]);
      return;
    }
    this.padded(where);
    this.ops.push(["put", where.path, value]);
  }

  /** `node[key] = target`, where `target` was read at `where`: nothing changes (past the end of a list it
   * adds a hole). A primitive may have been read through a value the walk replaced (the length of ""),
   * so it is written again. @param {Loc} where @param {any} target */
  keep(where, target) {
    if (target !== UNDEFINED && (target === null || typeof target !== "object")) this.put(where, target);
    else if (where.kind === PATH && where.path !== null && where.listLen !== null
        && /** @type {number} */ (where.index) >= where.listLen) {
      this.padded(where);
      this.ops.push(["keep", where.path]);
    }
  }

  /** Write deepMerge(target, source) at `where` (`target` is what it holds).
   * @param {Loc} where @param {any} target @param {any} source */
  merge(where, target, source) {
    if (where.kind === HIDDEN) {
      this.note("list_key_ignored", where.text, { path: where.text, key: where.key });
      return;
    }
    if (source === UNDEFINED) {
      this.note("missing_value", where.text, { path: where.text, effect: "the value there is kept" });
      this.keep(where, target);
    } else if (!truthy(source)) {
      this.note("merge_ignored", where.text, { path: where.text, value: jsonText(source) });
      this.keep(where, target);
    } else if (!truthy(target) || typeof target !== "object" || typeof source !== "object") {
      this.put(where, source);
    } else {
      if (Array.isArray(target) || Array.isArray(source)) {
        this.note("merge_list_by_index", where.text, { path: where.text, source: kind(source), target: kind(target) });
      }
      this.mergeChildren(where.path, target, source, where.text);
    }
  }

  /** The loop of deepMerge over the source's keys, writing into (a copy of) `target`.
   * @param {any[] | null} path @param {any} target @param {any} source @param {string} text */
  mergeChildren(path, target, source, text) {
    const isList = Array.isArray(target);
    let length = isList ? target.length : 0;
    const keys = Array.isArray(source) ? source.map((_, i) => String(i)) : Object.keys(source);
    for (const key of keys) {
      const value = Array.isArray(source) ? source[Number(key)] : source[key];
      /** @type {Loc} */
      let child;
      let current;
      if (isList) {
        const at = `${text}[${key}]`;
        if (isIndex(key)) {
          const index = Number(key);
          child = loc(PATH, sub(path, index), length, index, at, key);
          current = index < target.length ? target[index] : UNDEFINED;
        } else if (path === null) {
          child = loc(PATH, null, null, null, at, key);
          current = key === "length" ? length : UNDEFINED;
        } else if (key === "length") {
          child = loc(LENGTH, path, length, null, at, key);
          current = length;
        } else {
          child = loc(HIDDEN, path, length, null, at, key);
          current = UNDEFINED;
        }
      } else {
        const at = `${text}.${key}`;
        child = loc(PATH, sub(path, key), null, null, at, key);
        current = has(target, key) ? target[key] : UNDEFINED;
      }
      const before = this.ops.length;
      if (isObject(value) || value === null) this.merge(child, current, value);
      else this.put(child, value);
      if (isList && this.ops.length > before) {
        const op = this.ops[this.ops.length - 1];
        if (child.kind === LENGTH && op[0] === "length") length = op[2];
        else if (child.index !== null && (op[0] === "put" || op[0] === "keep") && child.index >= length) length = child.index + 1;
      }
    }
  }

  /** A delta with a delta_path: the client's getValueByPath, then setValueByPath.
   * @param {string} action @param {Record<string, any>} base @param {Record<string, any>} props @param {string} rawPath */
  pathDelta(action, base, props, rawPath) {
    const parts = parsePath(rawPath);
    const full = `props.${rawPath}`;
    for (const part of parts) {
      if (part.literal && (part.raw.includes("[") || part.raw.includes("]") || part.raw === "")) {
        this.note("path_literal", full, { part: part.raw });
      }
    }
    const target = readPath(base, parts);
    const sent = readPath(props, parts);
    const spec = action === "append" ? this.appendSpec(target, sent, full) : this.writeSpec(action, target, sent, full);
    const where = this.walkPath(parts, base, full);
    if (spec[0] === "put") this.put(where, spec[1]);
    else if (spec[0] === "merge") this.merge(where, spec[1], spec[2]);
    else if (where.kind === PATH && where.path !== null) this.ops.push([spec[0], where.path, spec[1]]);
  }

  /** What appending `sent` onto `target` writes: ["concat", text], ["extend", items] or ["put", value].
   * @param {any} target @param {any} sent @param {string} full @returns {any[]} */
  appendSpec(target, sent, full) {
    if (typeof target === "string") {
      if (typeof sent === "string") return ["concat", sent];
      if (sent === UNDEFINED) {
        this.note("missing_value", full, { path: full, effect: 'appends the text "undefined"' });
        return ["concat", "undefined"];
      }
      const text = jsString(sent);
      this.note("append_coerced", full, { kind: kind(sent), path: full, text });
      return ["concat", text];
    }
    if (Array.isArray(target)) {
      if (sent !== UNDEFINED) return ["extend", Array.isArray(sent) ? sent : [sent]];
      this.note("missing_value", full, { path: full, effect: "adds null to the list" });
      return ["extend", [null]];
    }
    if (sent === UNDEFINED) {
      this.note("missing_value", full, { path: full, effect: removes(target) });
    } else if (target !== UNDEFINED && target !== null) {
      this.note("append_replaced", full, { kind: kind(target), path: full });
    }
    return ["put", sent];
  }

  /** What a merge, replace or set of `sent` over `target` writes: ["merge", target, sent] or ["put", sent].
   * @param {string} action @param {any} target @param {any} sent @param {string} full @returns {any[]} */
  writeSpec(action, target, sent, full) {
    if (action === "merge") return ["merge", target, sent];
    if (sent === UNDEFINED) this.note("missing_value", full, { path: full, effect: removes(target) });
    return ["put", sent];
  }

  /** setValueByPath's walk: to the last part, making what is missing; where the last part writes.
   * @param {PathPart[]} parts @param {Record<string, any>} base @param {string} full @returns {Loc} */
  walkPath(parts, base, full) {
    /** @type {Node} */
    let node = [[], base, "props"];
    let text = "props";
    for (let i = 0; i < parts.length - 1; i++) {
      const part = parts[i];
      const following = parts[i + 1];
      const madeKey = !following.literal && following.index === null && DIGITS.test(following.key) ? following.key : null;
      if (part.index !== null) {
        const holder = this.ensure(node, part.key, true, `${text}.${part.key}`, null);
        text = `${text}.${part.raw}`;
        node = elementNode(holder, part.index, text);
      } else {
        text = `${text}.${part.raw}`;
        node = this.ensure(node, part.key, false, text, madeKey);
      }
    }
    const last = parts[parts.length - 1];
    if (last.index === null) return this.locate(node, last.key, full);
    const holder = this.ensure(node, last.key, true, `${text}.${last.key}`, null);
    return this.locate(holder, last.index, full);
  }

  /** A delta without a delta_path: onto the props themselves.
   * @param {string} action @param {Record<string, any>} base @param {Record<string, any>} props */
  wholeDelta(action, base, props) {
    if (action === "replace") {
      this.ops.push(["props", props]);
    } else if (action === "merge") {
      this.mergeChildren([], base, props, "props");
    } else if (action === "set") {
      for (const key of Object.keys(props)) this.ops.push(["put", [key], props[key]]);
    } else {
      for (const key of Object.keys(props)) this.appendKey(key, props[key], has(base, key) ? base[key] : UNDEFINED);
    }
  }

  /** Append `value` onto the prop `key`, which holds `current`.
   * @param {string} key @param {any} value @param {any} current */
  appendKey(key, value, current) {
    const at = `props.${key}`;
    if (typeof current === "string") {
      let text = value;
      if (typeof value !== "string") {
        text = jsString(value);
        this.note("append_coerced", at, { kind: kind(value), path: at, text });
      }
      this.ops.push(["concat", [key], text]);
    } else if (Array.isArray(current)) {
      this.ops.push(["extend", [key], Array.isArray(value) ? value : [value]]);
    } else {
      if (current !== UNDEFINED && current !== null) this.note("append_replaced", at, { kind: kind(current), path: at });
      this.ops.push(["put", [key], value]);
    }
  }
}

/** getValueByPath: what `obj` holds at `parts` (UNDEFINED where nothing is).
 * @param {any} obj @param {PathPart[]} parts @returns {any} */
function readPath(obj, parts) {
  for (const part of parts) {
    obj = get(obj, part.key);
    if (part.index !== null) obj = get(obj, part.index);
  }
  return obj;
}

/** The node for `holder[index]` on the walk (`text` names it): its path, when the props can show one.
 * @param {Node} holder @param {string} index @param {string} text @returns {Node} */
function elementNode(holder, index, text) {
  const [hPath, hValue] = holder;
  const element = get(hValue, index);
  /** @type {any[] | null} */
  let ePath;
  if (hPath === null || hValue === null || typeof hValue !== "object") ePath = null;
  else if (isObject(hValue)) ePath = [...hPath, index];
  else ePath = isIndex(index) ? [...hPath, Number(index)] : null;
  return [ePath, element, text];
}

/** @param {string} text */
function invalid(text) {
  return new DeltaError("invalid_message", text);
}

/** @param {any} value */
function absent(value) {
  return value === undefined || value === null;
}

/** Check the message's own fields (same order as the Python engine). @param {any} message */
function envelope(message) {
  if (!isObject(message)) throw invalid(`message must be an object, got ${kind(message)}`);
  const type = message.type;
  if (typeof type !== "string") throw invalid("message.type must be a string");
  let props = has(message, "props") ? message.props : undefined;
  if (absent(props)) props = {};
  else if (!isObject(props)) throw invalid(`message.props must be an object, got ${kind(props)}`);
  else checkJson(props, "message.props");
  const id = message.id;
  if (!absent(id) && typeof id !== "string") throw invalid("message.id must be a string");
  for (const flag of ["delta", "done"]) {
    if (!absent(message[flag]) && typeof message[flag] !== "boolean") throw invalid(`message.${flag} must be a boolean`);
  }
  const action = message.delta_action;
  if (!absent(action) && typeof action !== "string") throw invalid("message.delta_action must be a string");
  const rawPath = message.delta_path;
  if (!absent(rawPath) && typeof rawPath !== "string") throw invalid("message.delta_path must be a string");
  if (!absent(message.group_id) && typeof message.group_id !== "string") throw invalid("message.group_id must be a string");
  if (!absent(message.metadata)) {
    if (!isObject(message.metadata)) throw invalid("message.metadata must be an object");
    checkJson(message.metadata, "message.metadata");
  }
  return { type, props, id: absent(id) || id === "" ? null : id, delta: message.delta === true,
    done: message.done === true, action: absent(action) || action === "" ? "append" : action,
    rawPath: absent(rawPath) ? "" : rawPath };
}

/** @param {any} state */
function checkState(state) {
  if (!(isObject(state) && Array.isArray(state.order) && isObject(state.messages))) {
    throw new DeltaError("invalid_state", "state must be {order: [...], messages: {...}}");
  }
}

/** @param {Planner} plan @param {Report | undefined} report */
function release(plan, report) {
  if (report) for (const [code, where, details] of plan.notes) report(code, where, details);
}

/**
 * @typedef {{type: string, props: Record<string, any>, id: string | null, delta: boolean, done: boolean,
 *   action: string, rawPath: string}} Fields a message's own fields, checked (envelope)
 * @typedef {{id: string, groupId: string | null, metadata: Record<string, any> | null}} ChangeBase
 */

/** Check `message` against `state` without changing either; throws DeltaError. Every diagnostic goes
 * to `report(code, where, details)` before this returns.
 * @param {OutputState} state @param {any} message @param {Report} [report] @returns {Change} */
export function planMessage(state, message, report) {
  checkState(state);
  const fields = envelope(message);
  const shared = fields.id === null; // id-less messages (and id "") share one slot
  const id = shared ? SHARED_SLOT : /** @type {string} */ (fields.id);
  const entry = addressed(state.messages, id);
  const groupId = absent(message.group_id) ? null : message.group_id;
  const metadata = absent(message.metadata) ? null : message.metadata;
  if (entry !== null && isTextOntoText(message, fields, entry, shared)) {
    // the stream's own case, text onto text, nothing to report: no planner. The concatenation keeps
    // both parts (a rope in every JavaScript engine) and joins them when the text is first read.
    // The change is one literal: spreading a base into it (`{...base, ...}`) cost V8 ~7 µs a delta.
    return { id, groupId, metadata, isNew: false, type: entry.type, mode: "delta", fresh: false,
      value: [["concat", [fields.rawPath], fields.props[fields.rawPath]]], done: fields.done };
  }
  /** @type {ChangeBase} */
  const base = { id, groupId, metadata };
  const plan = new Planner(id);
  if (shared && entry !== null) plan.note("shared_slot", null, { count: "2 or more" });
  const closed = entry !== null && truthy(entry.done);
  if (closed) plan.note("after_done", null, { id });
  const typeChange = truthy(has(message, "type_change") ? message.type_change : UNDEFINED);
  const change = fields.delta
    ? planDelta(plan, base, fields, entry, { closed, shared, typeChange })
    : planWhole(plan, base, fields, entry);
  release(plan, report);
  return change;
}

/** The entry at `id` (its own or the shared slot), null when there is none yet.
 * @param {Record<string, OutputEntry>} messages @param {string} id @returns {OutputEntry | null} */
function addressed(messages, id) {
  const entry = has(messages, id) ? messages[id] : null;
  if (entry !== null && !(isObject(entry) && isObject(entry.props) && typeof entry.type === "string")) {
    throw new DeltaError("invalid_state", `state entry ${JSON.stringify(id)} is not {id, type, props, done}`);
  }
  return entry;
}

/** A Change from its base and the rest, as one literal of one shape (no spread: see planMessage).
 * @param {ChangeBase} base @param {boolean} isNew @param {string} type @param {string} mode
 * @param {boolean} fresh @param {any} value @param {boolean} done @returns {Change} */
function changeOf(base, isNew, type, mode, fresh, value, done) {
  return { id: base.id, groupId: base.groupId, metadata: base.metadata, isNew, type, mode, fresh, value, done };
}

/** Whether the message appends text onto the text of an open entry of its type, by a plain key: the
 * stream's own case, which nothing can make surprising.
 * @param {any} message @param {Fields} fields @param {OutputEntry} entry @param {boolean} shared */
function isTextOntoText(message, fields, entry, shared) {
  const { type, props, action, rawPath } = fields;
  return fields.delta && !shared && action === "append" && (type === entry.type || !type)
    && !has(message, "type_change") && !truthy(entry.done) && PLAIN.test(rawPath)
    && typeof (has(props, rawPath) ? props[rawPath] : undefined) === "string"
    && typeof (has(entry.props, rawPath) ? entry.props[rawPath] : undefined) === "string";
}

/** A message that is no delta: its props replace the entry's, except a bare done, which keeps them.
 * @param {Planner} plan @param {ChangeBase} base @param {Fields} fields @param {OutputEntry | null} entry
 * @returns {Change} */
function planWhole(plan, base, fields, entry) {
  const { type, props, done } = fields;
  if (done && Object.keys(props).length === 0 && entry !== null) { // the bare done: keep the props
    if (Object.keys(entry.props).length > 0) plan.note("bare_done_kept", null, { id: base.id });
    return changeOf(base, false, type, "close", false, null, true);
  }
  return changeOf(base, entry === null, type, "put", false, props, done);
}

/** A delta: planned onto the entry's props (or onto none when it starts afresh); a message the client
 * throws on changes nothing (dropped).
 * @param {Planner} plan @param {ChangeBase} base @param {Fields} fields @param {OutputEntry | null} entry
 * @param {{closed: boolean, shared: boolean, typeChange: boolean}} flags @returns {Change} */
function planDelta(plan, base, fields, entry, { closed, shared, typeChange }) {
  const { type, done } = fields;
  const isNew = entry === null;
  const fresh = isNew || closed || (typeChange && !shared);
  if (isNew) plan.note("unknown_id", null, { id: base.id });
  const baseProps = fresh || entry === null ? {} : entry.props;
  const baseType = fresh || entry === null ? type : entry.type;
  if (!planEdits(plan, fields, baseProps)) {
    return changeOf(base, isNew, baseType, "drop", false, [], done);
  }
  let newType = baseType;
  if (type && type !== baseType && !typeChange) {
    plan.note("type_changed", null, { id: base.id, new: type, old: baseType });
    newType = type;
  }
  return changeOf(base, isNew, newType, "delta", fresh, plan.ops, done);
}

/** Plan the delta's edits of `baseProps`; false (its notes replaced by one "dropped") when the client
 * throws on it. @param {Planner} plan @param {Fields} fields @param {Record<string, any>} baseProps */
function planEdits(plan, { action, props, rawPath }, baseProps) {
  try {
    if (!KNOWN_ACTIONS.includes(action)) plan.note("invalid_action", null, { action });
    else if (rawPath) plan.pathDelta(action, baseProps, props, rawPath);
    else plan.wholeDelta(action, baseProps, props);
    return true;
  } catch (error) {
    if (!(error instanceof Drop)) throw error;
    plan.notes = [];
    plan.note("dropped", null, { reason: error.reason });
    return false;
  }
}

// ---- commit: writes only; every check already passed in planMessage -------------------------------

/** `parent[key] = value` with JSON's view of undefined (a deleted key, a null element).
 * @param {any} parent @param {string | number} key @param {any} value */
function write(parent, key, value) {
  const stored = value === UNDEFINED ? null : value;
  if (Array.isArray(parent)) {
    const index = /** @type {number} */ (key);
    while (parent.length < index) parent.push(null);
    parent[index] = stored;
  } else if (value === UNDEFINED) {
    delete parent[key];
  } else {
    put(parent, key, stored);
  }
}

/** @param {OutputEntry} entry @param {any[][]} ops */
function runOps(entry, ops) {
  for (const op of ops) {
    const kind = op[0];
    if (kind === "props") {
      entry.props = cloneJson(op[1]);
      continue;
    }
    const path = op[1];
    if (kind === "length") {
      /** @type {any} */
      let items = entry.props;
      for (const key of path) items = items[key];
      while (items.length < op[2]) items.push(null);
      items.length = op[2];
      continue;
    }
    /** @type {any} */
    let parent = entry.props;
    for (let i = 0; i < path.length - 1; i++) parent = parent[path[i]];
    const key = path[path.length - 1];
    if (kind === "concat") put(parent, key, parent[key] + op[2]);
    else if (kind === "put") write(parent, key, op[2] === UNDEFINED ? UNDEFINED : cloneJson(op[2]));
    else if (kind === "ensure") write(parent, key, op[2] ? [] : {});
    else if (kind === "extend") for (const item of op[2]) parent[key].push(cloneJson(item));
    else if (key >= parent.length) write(parent, key, UNDEFINED); // keep: past the end of a list, a hole
  }
}

/** Write a planned change into `state` in place (the state it was planned on, or an equal one).
 * @param {OutputState} state @param {Change} change */
export function commitChange(state, change) {
  if (change.mode === "drop") return;
  const messages = state.messages;
  /** @type {OutputEntry} */
  let entry;
  if (change.isNew) {
    entry = { id: change.id, type: change.type, props: {}, done: false };
    state.order.push(change.id);
    put(messages, change.id, entry);
  } else {
    entry = messages[change.id];
  }
  entry.type = change.type;
  if (change.mode === "put") {
    entry.props = cloneJson(change.value);
  } else if (change.mode === "delta") {
    if (change.fresh) entry.props = {};
    runOps(entry, change.value);
  }
  entry.done = change.done;
  if (change.groupId !== null) entry.group_id = change.groupId;
  if (change.metadata !== null) entry.metadata = cloneJson(change.metadata);
}

/** Apply `message` to a state the caller owns; returns the message's id. Throws DeltaError and
 * leaves the state unchanged on error.
 * @param {OutputState} state @param {any} message @param {Report} [report] @returns {string} */
export function applyMessageInPlace(state, message, report) {
  const change = planMessage(state, message, report);
  commitChange(state, change);
  return change.id;
}

/** A new state with `message` applied; `state` and `message` are never mutated.
 * @param {OutputState} state @param {any} message @param {Report} [report] @returns {OutputState} */
export function applyMessage(state, message, report) {
  const change = planMessage(state, message, report);
  /** @type {Record<string, OutputEntry>} */
  const messages = {};
  for (const key of Object.keys(state.messages)) put(messages, key, state.messages[key]);
  if (change.mode !== "drop" && !change.isNew) put(messages, change.id, cloneJson(messages[change.id]));
  const next = { order: [...state.order], messages };
  commitChange(next, change);
  return next;
}
