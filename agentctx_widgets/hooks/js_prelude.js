// agentctx-widgets: the host environment a JavaScript hook runs in (evaluated before the hook source).
//
// A sealed bridge: everything this file needs is captured before any hook code runs, so a hook that
// replaces `JSON`, `Error`, `Array`, `Reflect`, `Function.prototype.apply` or any built-in method changes
// nothing here. Its completion value is a function that hands the bridge's entry points to Python (no
// global names: a hook cannot reach or replace them). What a hook sends is serialized by the captured
// JSON.stringify with the built-in prototypes' `toJSON` hidden (a hook that sets
// `Object.prototype.toJSON` sees it in its own code, never in what it sends; a Date still sends its ISO
// text), and every envelope back to Python is built from strings, so no hook can break the protocol.
// Private stack frames are named __agentctx_* so error stacks can skip them. The seed's own
// `function Error(ctx, messages, error)` replaces the global Error: the built-in is kept here.
// A ctx may also get members the host binds per call (today's Yao ctx, see "members the host binds"):
// closures over the same captured host call, built from own properties of a table the hook never sees.
(function () {
  "use strict";
  const G = globalThis;
  const _Error = Error, _String = String;
  const _ErrorPrototype = Error.prototype, _PromisePrototype = Promise.prototype, _DatePrototype = Date.prototype;
  const _StringPrototype = String.prototype;
  const _stringify = JSON.stringify, _parse = JSON.parse;
  const _isArray = Array.isArray, _defineProperty = Object.defineProperty, _getPrototypeOf = Object.getPrototypeOf;
  const _getOwnPropertyNames = Object.getOwnPropertyNames, _getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const _values = Object.values, _freeze = Object.freeze;
  const _apply = Reflect.apply;
  const _fnToString = Function.prototype.toString;
  const _substring = String.prototype.substring;
  function __agentctx_flat(text) {
    // QuickJS-NG keeps a long concatenation as a rope, which the Python binding cannot read ("Unknown
    // quickjs tag: -6"): every string handed back to Python is flattened first (substring copies it)
    return typeof text === "string" ? _apply(_substring, text, [0]) : text;
  }
  const _dateGetTime = Date.prototype.getTime, _dateToISOString = Date.prototype.toISOString;
  const host = G.__agentctx_host;
  delete G.__agentctx_host;

  function __agentctx_inherits(value, proto) {
    // `value instanceof C` without C[Symbol.hasInstance] or C.prototype, which a hook can replace
    if (value === null || (typeof value !== "object" && typeof value !== "function")) return false;
    let p = _getPrototypeOf(value);
    for (let depth = 0; p !== null && depth < 10000; depth++) {
      if (p === proto) return true;
      p = _getPrototypeOf(p);
    }
    return false;
  }

  // -- the sealed serializer ------------------------------------------------------------------------
  let sealed = false; // true while the bridge serializes: the built-in prototypes then have no toJSON
  function __agentctx_date_toJSON() {
    try {
      const time = _apply(_dateGetTime, this, []);
      return time === time ? _apply(_dateToISOString, this, []) : null;
    } catch (error) {
      return null;
    }
  }
  function __agentctx_guard(proto) {
    const own = _getOwnPropertyDescriptor(proto, "toJSON");
    if (own !== undefined && !own.configurable) return;
    let shadow = own === undefined ? undefined : own.value;
    const inBridge = proto === _DatePrototype ? __agentctx_date_toJSON : undefined;
    _defineProperty(proto, "toJSON", {
      __proto__: null, // every descriptor here: a hook's getters on Object.prototype are not read
      configurable: false,
      enumerable: false,
      get: function __agentctx_toJSON_get() { return sealed ? inBridge : shadow; },
      set: function __agentctx_toJSON_set(value) {
        if (this === proto) { shadow = value; return; }
        if (this === null || (typeof this !== "object" && typeof this !== "function")) return;
        _defineProperty(this, "toJSON", { __proto__: null, value: value, writable: true, enumerable: true, configurable: true });
      },
    });
  }
  (function __agentctx_guard_builtins() {
    const protos = [];
    function add(start) {
      let p = start;
      for (let depth = 0; depth < 32 && p !== null && (typeof p === "object" || typeof p === "function"); depth++) {
        for (let i = 0; i < protos.length; i++) if (protos[i] === p) return;
        protos[protos.length] = p;
        p = _getPrototypeOf(p);
      }
    }
    add(Function.prototype);
    const names = _getOwnPropertyNames(G);
    for (let i = 0; i < names.length; i++) {
      try {
        const value = G[names[i]];
        if (typeof value === "function" && value.prototype !== null && typeof value.prototype === "object") add(value.prototype);
      } catch (error) {}
    }
    const samples = [
      () => [][Symbol.iterator](), () => new Map().entries(), () => new Set().values(), () => ""[Symbol.iterator](),
      () => /x/[Symbol.matchAll]("x"), () => (function* () {})(), () => (function* () {}),
      () => (async function () {}), () => (async function* () {})(), () => (async function* () {}),
      () => _getPrototypeOf(Int8Array).prototype, () => new Int8Array(0), () => Iterator.prototype,
    ];
    for (let i = 0; i < samples.length; i++) {
      try { add(samples[i]()); } catch (error) {}
    }
    // (a sample's own object is guarded too: a throwaway, harmless)
    for (let i = 0; i < protos.length; i++) {
      try { __agentctx_guard(protos[i]); } catch (error) {}
    }
  })();

  function __agentctx_json(value) {
    // JSON.stringify as it was, with the built-in prototypes' toJSON out of the way
    const was = sealed;
    sealed = true;
    try {
      return _stringify(value);
    } finally {
      sealed = was;
    }
  }

  // -- host calls -----------------------------------------------------------------------------------
  let abortStack = "";
  function __agentctx_hostcall(name, args) {
    const text = host(name, __agentctx_json(args));
    if (text === "") return undefined;
    const reply = _parse(text);
    if (reply[0] === 0) return reply[1] === null ? undefined : reply[1];
    const error = new _Error(reply[1]); // ctx.* throw plain Errors, as Yao does
    if (reply[0] === 2) {
      // the call was stopped (a limit, a cap): whatever the hook does with this error, the call fails
      try { abortStack = _String(error.stack); } catch (e) { abortStack = ""; }
    } else {
      if (typeof reply[2] === "string") {
        _defineProperty(error, "name", { __proto__: null, value: reply[2], writable: true, enumerable: false, configurable: true });
      }
      if (typeof reply[3] === "string") {
        _defineProperty(error, "code", { __proto__: null, value: reply[3], writable: true, enumerable: true, configurable: true });
      }
    }
    throw error;
  }

  // What Yao's ctx.Send / SendGroup check before anything else (agent/context/jsapi.go:167-215,
  // jsapi_helpers.go:12-147 at afab9c2), with Yao's words, then what the value was, as JavaScript names it
  // (a live value, so also "a Date", "function"; this runtime's one type-name helper: it cannot share
  // js/src, an ES module the browser bundles, and it must use the primordials captured above).
  function __agentctx_kind(value) {
    if (value === null) return "null";
    if (_isArray(value)) return "an array";
    if (__agentctx_inherits(value, _DatePrototype)) return "a Date";
    return typeof value;
  }
  function __agentctx_shown(value) {
    const kind = __agentctx_kind(value);
    if (kind === "string" || kind === "number" || kind === "boolean") return kind + " " + _stringify(value);
    return kind;
  }
  function __agentctx_check_message(message, prefix, place) {
    if (typeof message === "string") return;
    if (message === null || (typeof message !== "object" && typeof message !== "function")) {
      throw new _Error(prefix + place + " must be a string or object (got " + __agentctx_shown(message) + ")");
    }
    if (typeof message === "function" || _isArray(message) || __agentctx_inherits(message, _DatePrototype) ||
        __agentctx_inherits(message, _StringPrototype)) {
      throw new _Error(prefix + place + " must be an object (got " + __agentctx_kind(message) + ")");
    }
    if (typeof message.type !== "string") {
      throw new _Error(prefix + place + ".type is required and must be a string (got " + __agentctx_shown(message.type) + ")");
    }
  }
  function __agentctx_check_group(group) {
    const prefix = "invalid group: ";
    if (group === null || typeof group !== "object" || _isArray(group)) {
      throw new _Error(prefix + "group must be an object (got " + __agentctx_shown(group) + ")");
    }
    if (typeof group.id !== "string") {
      throw new _Error(prefix + "group.id is required and must be a string (got " + __agentctx_shown(group.id) + ")");
    }
    const members = group.messages;
    if (!_isArray(members)) {
      throw new _Error(prefix + "group.messages is required and must be an array (got " + __agentctx_shown(members) + ")");
    }
    for (let i = 0; i < members.length; i++) {
      const member = members[i];
      if (member === null || typeof member !== "object" || _isArray(member)) {
        throw new _Error(prefix + "group.messages[" + i + "] must be an object (got " + __agentctx_shown(member) + ")");
      }
      if (typeof member.type !== "string") {
        throw new _Error(prefix + "group.messages[" + i + "].type is required (got " + __agentctx_shown(member.type) + ")");
      }
    }
  }

  function __agentctx_text(value) {
    try { return _String(value); } catch (error) { return "[a value that cannot be shown]"; }
  }
  function __agentctx_format(value) {
    if (typeof value === "string") return value;
    if (__agentctx_inherits(value, _ErrorPrototype)) {
      let name = "Error", message = "";
      try { name = _String(value.name); message = _String(value.message); } catch (error) {}
      return name + ": " + message;
    }
    if (value === undefined) return "undefined";
    if (typeof value === "function") {
      let name = "";
      try { name = _String(value.name || ""); } catch (error) {}
      return "[Function " + (name || "anonymous") + "]";
    }
    try {
      const text = __agentctx_json(value);
      return text === undefined ? __agentctx_text(value) : text;
    } catch (error) {
      return __agentctx_text(value);
    }
  }

  function __agentctx_console(level) {
    return function __agentctx_console_write() {
      let text = "";
      for (let i = 0; i < arguments.length; i++) text += (i ? " " : "") + __agentctx_format(arguments[i]);
      __agentctx_hostcall("console", [level, text]);
    };
  }

  G.console = {
    log: __agentctx_console("log"),
    info: __agentctx_console("info"),
    warn: __agentctx_console("warn"),
    error: __agentctx_console("error"),
    debug: __agentctx_console("debug"),
  };
  G.time = {
    Sleep: function __agentctx_Sleep(ms) {
      __agentctx_hostcall("sleep", [ms]);
    },
  };
  G.process = { env: {} };

  function __agentctx_Send(message) {
    if (arguments.length < 1) throw new _Error("Send requires a message argument");
    __agentctx_check_message(message, "invalid message: ", "message");
    __agentctx_hostcall("send", [message]);
  }
  function __agentctx_SendGroup(group) {
    if (arguments.length < 1) throw new _Error("SendGroup requires a group argument");
    __agentctx_check_group(group);
    __agentctx_hostcall("send_group", [group]);
  }
  function __agentctx_Flush() {
    __agentctx_hostcall("flush", []);
  }
  const CTX_METHODS = [["Send", __agentctx_Send], ["SendGroup", __agentctx_SendGroup], ["Flush", __agentctx_Flush],
    ["send", __agentctx_Send], ["send_group", __agentctx_SendGroup], ["flush", __agentctx_Flush]];

  function __agentctx_make_ctx(ctx) {
    for (let i = 0; i < CTX_METHODS.length; i++) {
      _defineProperty(ctx, CTX_METHODS[i][0], { __proto__: null, value: CTX_METHODS[i][1], writable: true, enumerable: true,
        configurable: true });
    }
    return ctx;
  }

  // -- members the host binds per call (today's Yao ctx: agentctx_widgets/yao/binding.py) ------------
  // The host sends a table with the call: {methods: {path: kind}, callbacks: {path: argument index},
  // node: {method: kind}, values: {path: value}, drop: [names]}. Each path becomes a method on ctx
  // (nested objects for dots) that makes the one host call "yao" with [path, arguments, wantsChunks];
  // the hook sees only these closures, never the table or the host. A result comes back as {v}: kind
  // "node" / "nodes" wrap trace node ids ({id}) as node objects, "owner" returns the object the method
  // was called on, "void" returns undefined. An options object's onChunk function stays here: while the host call runs, the host
  // calls it back (a "K" frame, __agentctx_run_callback) once per chunk and reads its number.
  const _trunc = Math.trunc, _keys = Object.keys, _split = String.prototype.split;
  function __agentctx_own(object, key) {
    // an own property only: what a hook put on Object.prototype is never read as part of the table
    const found = _getOwnPropertyDescriptor(object, key);
    return found === undefined ? undefined : found.value;
  }
  function __agentctx_parts(path) { return _apply(_split, path, ["."]); }
  function __agentctx_holder(root, parts) {
    let at = root;
    for (let i = 0; i < parts.length - 1; i++) {
      let next = __agentctx_own(at, parts[i]);
      if (next === null || typeof next !== "object") {
        next = {};
        _defineProperty(at, parts[i], { __proto__: null, value: next, writable: true, enumerable: true, configurable: true });
      }
      at = next;
    }
    return at;
  }
  const waiting = []; // the onChunk functions of the host calls running now (innermost last)
  function __agentctx_run_callback(argsJson) {
    // One chunk for the innermost waiting onChunk; its number goes back (non-zero stops the stream, as
    // jsapi_agent.go:188-194 reads it); a throw stops it too and is not rethrown (:183-186).
    const callback = waiting.length > 0 ? waiting[waiting.length - 1] : undefined;
    if (callback === undefined) return '{"ok":false,"error":"no onChunk is waiting"}';
    let answer;
    try {
      answer = _apply(callback, undefined, _parse(argsJson));
    } catch (thrown) {
      return '{"ok":false,"error":' + _stringify(__agentctx_format(thrown)) + "}";
    }
    let number = 0;
    if (typeof answer === "number" && answer === answer && answer !== 1 / 0 && answer !== -1 / 0) number = _trunc(answer);
    return '{"ok":true,"value":' + _stringify(number) + "}";
  }
  function __agentctx_bound_call(path, args, callbackAt, outside) {
    const door = outside ? "yao_outside" : "yao"; // "yao_outside": its wait is not the hook's time
    let callback;
    if (callbackAt !== undefined && args.length > callbackAt) {
      const options = args[callbackAt];
      if (options !== null && typeof options === "object") {
        const onChunk = options.onChunk; // the hook's own object: read as the hook wrote it
        if (typeof onChunk === "function") callback = onChunk;
      }
    }
    let reply;
    if (callback === undefined) {
      reply = __agentctx_hostcall(door, [path, args, false]);
    } else {
      const depth = waiting.length;
      waiting[depth] = callback;
      try {
        reply = __agentctx_hostcall(door, [path, args, true]);
      } finally {
        waiting.length = depth;
      }
    }
    if (reply === null || typeof reply !== "object") return undefined;
    return __agentctx_own(reply, "v");
  }
  function __agentctx_arguments(list) {
    const args = [];
    for (let i = 0; i < list.length; i++) args[i] = list[i];
    return args;
  }
  function __agentctx_node(table, value) {
    const id = value !== null && typeof value === "object" ? __agentctx_own(value, "id") : undefined;
    if (typeof id !== "string") return value;
    const node = { id: id };
    const methods = __agentctx_own(table, "node");
    const names = _keys(methods);
    for (let i = 0; i < names.length; i++) {
      const method = names[i], kind = __agentctx_own(methods, method);
      _defineProperty(node, method, { __proto__: null, writable: true, enumerable: true, configurable: true,
        value: function __agentctx_node_method() {
          const args = [id];
          for (let j = 0; j < arguments.length; j++) args[j + 1] = arguments[j];
          return __agentctx_result(table, kind, __agentctx_bound_call("trace.node." + method, args, undefined, false),
            node);
        } });
    }
    return node;
  }
  function __agentctx_result(table, kind, value, owner) {
    if (kind === "node") return __agentctx_node(table, value);
    if (kind === "nodes" && _isArray(value)) {
      const nodes = [];
      for (let i = 0; i < value.length; i++) nodes[i] = __agentctx_node(table, value[i]);
      return nodes;
    }
    if (kind === "owner") return owner;
    if (kind === "void") return undefined;
    return value;
  }
  function __agentctx_bind(ctx, table) {
    const drop = __agentctx_own(table, "drop"), methods = __agentctx_own(table, "methods");
    const callbacks = __agentctx_own(table, "callbacks"), values = __agentctx_own(table, "values");
    const outsideList = __agentctx_own(table, "outside"), outside = { __proto__: null };
    for (let i = 0; i < outsideList.length; i++) outside[outsideList[i]] = true;
    for (let i = 0; i < drop.length; i++) delete ctx[drop[i]];
    const paths = _keys(methods);
    for (let i = 0; i < paths.length; i++) {
      const path = paths[i], kind = __agentctx_own(methods, path), parts = __agentctx_parts(path);
      const holder = __agentctx_holder(ctx, parts);
      const callbackAt = __agentctx_own(callbacks, path), waits = outside[path] === true;
      _defineProperty(holder, parts[parts.length - 1], { __proto__: null, writable: true, enumerable: true,
        configurable: true, value: function __agentctx_ctx_method() {
          return __agentctx_result(table, kind,
            __agentctx_bound_call(path, __agentctx_arguments(arguments), callbackAt, waits), holder);
        } });
    }
    const names = _keys(values);
    for (let i = 0; i < names.length; i++) {
      const parts = __agentctx_parts(names[i]);
      _defineProperty(__agentctx_holder(ctx, parts), parts[parts.length - 1], { __proto__: null,
        value: __agentctx_own(values, names[i]), writable: false, enumerable: true, configurable: true });
    }
    return ctx;
  }

  // The deprecated Output API: `const output = new Output(ctx); output.Send(...)`, as Yao designed it
  // (agent/output/jsapi/output.go, commented out at afab9c2): the constructor needs the ctx, and Send /
  // SendGroup return the Output, so calls chain. Flush is ours (the seed's buffer needs one).
  function Output(ctx) {
    if (!(this instanceof Output)) throw new _Error("Output must be called with new");
    if (arguments.length < 1 || ctx === undefined) throw new _Error("Output constructor requires a context argument");
    if (ctx === null || typeof ctx !== "object" || typeof ctx.Send !== "function") {
      throw new _Error("context must be an object: expected the hook's ctx (got " + __agentctx_shown(ctx) + ")");
    }
    __agentctx_hostcall("console", ["warn", "new Output(ctx) is deprecated; use ctx.Send / ctx.SendGroup / ctx.Flush"]);
    this.ctx = ctx;
  }
  Output.prototype.Send = function __agentctx_Output_Send(message) {
    if (arguments.length < 1) throw new _Error("Send requires a message argument");
    this.ctx.Send(message);
    return this;
  };
  Output.prototype.SendGroup = function __agentctx_Output_SendGroup(group) {
    if (arguments.length < 1) throw new _Error("SendGroup requires a group argument");
    this.ctx.SendGroup(group);
    return this;
  };
  Output.prototype.Flush = function __agentctx_Output_Flush() { this.ctx.Flush(); return this; };
  Output.prototype.send = Output.prototype.Send;
  Output.prototype.send_group = Output.prototype.SendGroup;
  Output.prototype.flush = Output.prototype.Flush;
  G.Output = Output;

  function __agentctx_define_global(name) {
    G[name] = function __agentctx_global() {
      return __agentctx_hostcall("global", [name, _values(arguments)]);
    };
  }

  // -- calling a hook -------------------------------------------------------------------------------
  let hooks = null; // name -> function, set once by js_discover.js through register()

  function __agentctx_describe(thrown) {
    // a thrown value's code as it was (a number stays a number: `error.code === 1` in the Error hook)
    let code = null;
    try {
      const raw = thrown !== null && typeof thrown === "object" ? thrown.code : undefined;
      if (typeof raw === "string" || typeof raw === "number" || typeof raw === "boolean") code = raw;
    } catch (error) {}
    if (__agentctx_inherits(thrown, _ErrorPrototype)) {
      let name = "Error", message = "", stack = "";
      try { name = _String(thrown.name); } catch (error) {}
      try { message = _String(thrown.message); } catch (error) {}
      try { stack = thrown.stack ? _String(thrown.stack) : ""; } catch (error) {}
      return '{"isError":true,"name":' + _stringify(name) + ',"message":' + _stringify(message) +
        ',"stack":' + _stringify(stack) + ',"code":' + _stringify(code) + "}";
    }
    let value = "null";
    try {
      const text = __agentctx_json(thrown);
      if (typeof text === "string") value = text;
    } catch (error) {}
    return '{"isError":false,"name":' + _stringify(typeof thrown) + ',"message":' +
      _stringify(__agentctx_format(thrown)) + ',"stack":"","code":' + _stringify(code) + ',"value":' + value + "}";
  }

  function __agentctx_call(name, argsJson, membersJson) {
    return __agentctx_flat(__agentctx_call_envelope(name, argsJson, membersJson));
  }

  function __agentctx_call_envelope(name, argsJson, membersJson) {
    try {
      const args = _parse(argsJson);
      args[0] = __agentctx_make_ctx(args[0]);
      if (typeof membersJson === "string") args[0] = __agentctx_bind(args[0], _parse(membersJson));
      let result;
      try {
        result = _apply(hooks[name], undefined, args);
      } catch (thrown) {
        return '{"ok":false,"thrown":' + __agentctx_describe(thrown) + "}";
      }
      if (__agentctx_inherits(result, _PromisePrototype)) {
        return '{"ok":false,"badReturn":"a Promise (async hooks are not supported; return the object)"}';
      }
      if (typeof result === "function") return '{"ok":false,"badReturn":"a function"}';
      let text;
      try {
        text = __agentctx_json(result === undefined ? null : result);
      } catch (error) {
        let why = "";
        try { why = _String(error.message); } catch (e) {}
        return '{"ok":false,"badReturn":' + _stringify("a value that is not JSON (" + why + ")") + "}";
      }
      return '{"ok":true,"value":' + (typeof text === "string" ? text : "null") + "}";
    } catch (internal) {
      let why = "unknown";
      try { why = _String(internal && internal.stack ? internal.message + "\n" + internal.stack : internal); } catch (e) {}
      return '{"ok":false,"internal":' + _stringify(why) + "}";
    }
  }

  function __agentctx_register(found) {
    if (hooks !== null) throw new _Error("the hooks are already registered");
    hooks = { __proto__: null };
    const order = ["Create", "Before", "After", "Done", "Error", "Next"]; // Next: Yao's (agentctx_widgets.yao)
    let names = "";
    for (let i = 0; i < order.length; i++) {
      const hook = found[order[i]];
      if (typeof hook === "function") {
        hooks[order[i]] = hook;
        names += (names ? "," : "") + _stringify(order[i]);
      }
    }
    return "[" + names + "]";
  }

  function __agentctx_source_of(name) {
    return _apply(_fnToString, hooks[name], []);
  }

  function __agentctx_take_abort() {
    const stack = abortStack;
    abortStack = "";
    return __agentctx_flat(stack);
  }

  const api = _freeze({
    __proto__: null,
    call: __agentctx_call,
    register: __agentctx_register,
    sourceOf: __agentctx_source_of,
    takeAbort: __agentctx_take_abort,
    callback: function __agentctx_callback(argsJson) { return __agentctx_flat(__agentctx_run_callback(argsJson)); },
    defineGlobal: __agentctx_define_global,
    builtinError: _Error,
  });
  return function __agentctx_api(name) { return api[name]; };
})();
