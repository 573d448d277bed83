// The delta engine: how a stream of output messages folds into a state (DESIGN.md "Output messages
// and deltas"). Mirrors agentctx_widgets/output/delta.py rule for rule, error code for error code;
// tests/vectors/delta.json binds both. Plain ESM, no dependencies.
//
// State: {order: [id], messages: {id: {id, type, props, done, group_id?, metadata?}}}.
// Every message is first planned (all checks, reading only), then committed (writes only), so a bad
// message never half-applies. applyMessage is pure (returns a new state that shares unchanged entries
// with the old one; treat states as immutable); applyMessageInPlace updates a state the caller owns
// at a cost of the message's size.
//
// Decisions beyond the seed (same as Python): an id-less message gets "#<n>", n = order.length, counting
// up past taken ids; a delta for an unknown id is an error ("unknown_id"); a non-delta message replaces
// type and props, a delta keeps the type; a done message with no props and no delta only closes; any
// message for a closed id is "closed"; group_id/metadata on a message replace the entry's; a path walks
// objects by key and arrays by decimal index ("items.0" = "items[0]"), missing object keys on the way
// are created as objects, array indexes must exist; append onto a missing or null target sets it,
// string + string concatenates, onto an array extends (a non-array value is wrapped), else
// "type_mismatch".

/** @typedef {"append" | "replace" | "merge" | "set"} DeltaAction */
/**
 * @typedef {{id: string, type: string, props: Record<string, any>, done: boolean,
 *   group_id?: string, metadata?: Record<string, any>}} OutputEntry
 * @typedef {{order: string[], messages: Record<string, OutputEntry>}} OutputState
 * @typedef {{id: string, isNew: boolean, type: string, mode: string, path: string[] | null,
 *   value: any, done: boolean, groupId: string | null, metadata: Record<string, any> | null}} Change
 */

/** @type {readonly DeltaAction[]} */
export const DELTA_ACTIONS = Object.freeze(["append", "replace", "merge", "set"]);

const SEGMENT = /^([^[\]]*)((?:\[[0-9]+\])*)$/;
const BRACKET = /\[([0-9]+)\]/g;
const INDEX = /^[0-9]+$/;
const MISSING = Symbol("missing");

/** A message that cannot be applied to a state; `code` says why. */
export class DeltaError extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.name = "DeltaError";
    this.code = code;
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

/** @param {any} value */
function kind(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "list";
  if (typeof value === "object") return "object";
  return typeof value;
}

/** "items.0.name" and "items[0].name" both give ["items", "0", "name"].
 * @param {string} path @returns {string[]} */
export function parsePath(path) {
  /** @type {string[]} */
  const segments = [];
  for (const part of path.split(".")) {
    const match = SEGMENT.exec(part);
    if (match === null || part === "") {
      throw new DeltaError("bad_path", `delta_path ${JSON.stringify(path)} is not a dotted path`);
    }
    if (match[1]) segments.push(match[1]);
    for (const bracket of match[2].matchAll(BRACKET)) segments.push(bracket[1]);
  }
  return segments;
}

/** @param {string[]} path @param {number} upto */
function where(path, upto) {
  return ["props", ...path.slice(0, upto)].join(".");
}

/** @param {string} segment @param {any[]} items @param {string[]} path @param {number} upto */
function listIndex(segment, items, path, upto) {
  if (!INDEX.test(segment) || Number(segment) >= items.length) {
    throw new DeltaError("bad_index", `${where(path, upto)}: no index ${segment} in a list of ${items.length}`);
  }
  return Number(segment);
}

/** The value at `path` in a state's props, or MISSING when an object key on the way is absent.
 * @param {Record<string, any>} props @param {string[]} path */
function find(props, path) {
  /** @type {any} */
  let current = props;
  for (let depth = 0; depth < path.length; depth++) {
    const segment = path[depth];
    if (isObject(current)) {
      if (!has(current, segment)) return MISSING;
      current = current[segment];
    } else if (Array.isArray(current)) {
      current = current[listIndex(segment, current, path, depth)];
    } else {
      throw new DeltaError("not_container", `${where(path, depth)} is a ${kind(current)}, not an object or a list`);
    }
  }
  return current;
}

/** The value at `path` in the sent props; any failure is "missing_value".
 * @param {Record<string, any>} props @param {string[]} path @param {string} rawPath */
function readSent(props, path, rawPath) {
  /** @type {any} */
  let current = props;
  for (const segment of path) {
    if (isObject(current) && has(current, segment)) {
      current = current[segment];
    } else if (Array.isArray(current) && INDEX.test(segment) && Number(segment) < current.length) {
      current = current[Number(segment)];
    } else {
      throw new DeltaError("missing_value", `message.props has no value at delta_path ${JSON.stringify(rawPath)}`);
    }
  }
  return current;
}

/** @param {any} target @param {any} value @param {string} at */
function checkAppend(target, value, at) {
  if (target === MISSING || target === null || Array.isArray(target)) return;
  if (typeof target === "string" && typeof value === "string") return;
  throw new DeltaError("type_mismatch", `cannot append a ${kind(value)} onto the ${kind(target)} at ${at}`);
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
  if (typeof type !== "string" || type === "") throw invalid("message.type must be a non-empty string");
  let props = has(message, "props") ? message.props : undefined;
  if (absent(props)) props = {};
  else if (!isObject(props)) throw invalid(`message.props must be an object, got ${kind(props)}`);
  const id = message.id;
  if (!absent(id) && (typeof id !== "string" || id === "")) throw invalid("message.id must be a non-empty string");
  for (const flag of ["delta", "done"]) {
    if (!absent(message[flag]) && typeof message[flag] !== "boolean") {
      throw invalid(`message.${flag} must be a boolean`);
    }
  }
  let action = message.delta_action;
  if (absent(action)) action = "append";
  else if (typeof action !== "string" || !DELTA_ACTIONS.includes(/** @type {any} */ (action))) {
    throw new DeltaError("invalid_action", `message.delta_action must be one of ${DELTA_ACTIONS.join(", ")}`);
  }
  const rawPath = message.delta_path;
  if (!absent(rawPath) && typeof rawPath !== "string") {
    throw new DeltaError("bad_path", "message.delta_path must be a string");
  }
  const path = rawPath ? parsePath(rawPath) : null;
  if (!absent(message.group_id) && typeof message.group_id !== "string") {
    throw invalid("message.group_id must be a string");
  }
  if (!absent(message.metadata) && !isObject(message.metadata)) throw invalid("message.metadata must be an object");
  return { type, props, id: absent(id) ? null : id, delta: message.delta === true, done: message.done === true,
    action, path };
}

/** @param {any} state */
function checkState(state) {
  if (!(isObject(state) && Array.isArray(state.order) && isObject(state.messages))) {
    throw new DeltaError("invalid_state", "state must be {order: [...], messages: {...}}");
  }
}

/** Check `message` against `state` without changing either; throws DeltaError.
 * @param {OutputState} state @param {any} message @returns {Change} */
export function planMessage(state, message) {
  checkState(state);
  const { type, props, id: givenId, delta, done, action, path } = envelope(message);
  const messages = state.messages;
  let id = givenId;
  if (id === null) {
    let n = state.order.length;
    while (has(messages, `#${n}`)) n += 1;
    id = `#${n}`;
  }
  const entry = has(messages, id) ? messages[id] : null;
  if (entry !== null && !(isObject(entry) && isObject(entry.props) && typeof entry.type === "string")) {
    throw new DeltaError("invalid_state", `state entry ${JSON.stringify(id)} is not {id, type, props, done}`);
  }
  if (entry !== null && entry.done) throw new DeltaError("closed", `message ${JSON.stringify(id)} is done`);
  const groupId = absent(message.group_id) ? null : message.group_id;
  const metadata = absent(message.metadata) ? null : message.metadata;
  const base = { id, done, groupId, metadata };
  if (!delta) {
    const bareClose = done && Object.keys(props).length === 0;
    const mode = entry !== null && bareClose ? "close" : "put";
    return { ...base, isNew: entry === null, type, mode, path: null, value: props };
  }
  if (entry === null) throw new DeltaError("unknown_id", `delta for message ${JSON.stringify(id)}, which was never sent`);
  const current = entry.props;
  if (path === null) {
    if (action === "append") {
      for (const key of Object.keys(props)) {
        checkAppend(has(current, key) ? current[key] : MISSING, props[key], `props.${key}`);
      }
    }
    return { ...base, isNew: false, type: entry.type, mode: action, path: null, value: props };
  }
  const value = readSent(props, path, message.delta_path);
  const target = find(current, path);
  if (action === "append") checkAppend(target, value, where(path, path.length));
  return { ...base, isNew: false, type: entry.type, mode: action, path, value };
}

// ---- commit: writes only; every check already passed in planMessage -------------------------------

/** Recursive merge of objects (in place on `target`); anything else: `value` wins.
 * @param {any} target @param {any} value @returns {any} */
function mergeInto(target, value) {
  if (isObject(target) && isObject(value)) {
    for (const key of Object.keys(value)) {
      put(target, key, has(target, key) ? mergeInto(target[key], value[key]) : cloneJson(value[key]));
    }
    return target;
  }
  return cloneJson(value);
}

/** @param {any} parent @param {string | number} key */
function read(parent, key) {
  if (Array.isArray(parent)) return parent[/** @type {number} */ (key)];
  return has(parent, /** @type {string} */ (key)) ? parent[key] : MISSING;
}

/** @param {any} parent @param {string | number} key @param {any} value */
function appendAt(parent, key, value) {
  const target = read(parent, key);
  if (Array.isArray(target)) {
    if (Array.isArray(value)) for (const item of value) target.push(cloneJson(item));
    else target.push(cloneJson(value));
  } else if (typeof target === "string") {
    put(parent, key, target + value);
  } else {
    put(parent, key, cloneJson(value));
  }
}

/** The container holding the path's last segment, and that segment as a key; makes missing objects.
 * @param {Record<string, any>} props @param {string[]} path @returns {[any, string | number]} */
function slot(props, path) {
  /** @type {any} */
  let current = props;
  for (const segment of path.slice(0, -1)) {
    if (Array.isArray(current)) {
      current = current[Number(segment)];
    } else {
      if (!has(current, segment)) put(current, segment, {});
      current = current[segment];
    }
  }
  const last = path[path.length - 1];
  return [current, Array.isArray(current) ? Number(last) : last];
}

/** @param {OutputEntry} entry @param {Change} change */
function applyDelta(entry, change) {
  const props = entry.props;
  if (change.path === null) {
    const keys = Object.keys(change.value);
    if (change.mode === "append") for (const key of keys) appendAt(props, key, change.value[key]);
    else if (change.mode === "replace") entry.props = cloneJson(change.value);
    else if (change.mode === "merge") mergeInto(props, change.value);
    else for (const key of keys) put(props, key, cloneJson(change.value[key]));
    return;
  }
  const [parent, key] = slot(props, change.path);
  if (change.mode === "append") {
    appendAt(parent, key, change.value);
  } else if (change.mode === "merge") {
    const current = read(parent, key);
    put(parent, key, current === MISSING ? cloneJson(change.value) : mergeInto(current, change.value));
  } else {
    put(parent, key, cloneJson(change.value));
  }
}

/** Write a planned change into `state` in place (the state it was planned on).
 * @param {OutputState} state @param {Change} change */
export function commitChange(state, change) {
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
  if (change.mode === "put") {
    entry.type = change.type;
    entry.props = cloneJson(change.value);
  } else if (change.mode !== "close") {
    applyDelta(entry, change);
  }
  if (change.done) entry.done = true;
  if (change.groupId !== null) entry.group_id = change.groupId;
  if (change.metadata !== null) entry.metadata = cloneJson(change.metadata);
}

/** Apply `message` to a state the caller owns; returns the message's id. Throws DeltaError and
 * leaves the state unchanged on error.
 * @param {OutputState} state @param {any} message @returns {string} */
export function applyMessageInPlace(state, message) {
  const change = planMessage(state, message);
  commitChange(state, change);
  return change.id;
}

/** A new state with `message` applied; `state` and `message` are never mutated.
 * @param {OutputState} state @param {any} message @returns {OutputState} */
export function applyMessage(state, message) {
  const change = planMessage(state, message);
  /** @type {Record<string, OutputEntry>} */
  const messages = {};
  for (const key of Object.keys(state.messages)) put(messages, key, state.messages[key]);
  if (!change.isNew) put(messages, change.id, cloneJson(messages[change.id]));
  const next = { order: [...state.order], messages };
  commitChange(next, change);
  return next;
}
