// agentctx-widgets: the host environment a JavaScript hook runs in (evaluated before the hook
// source). Everything private is named __agentctx_* so error stacks can skip these frames, and the
// built-ins we rely on are captured first: the seed's own `function Error(ctx, messages, error)`
// replaces the global Error.
(function () {
  const G = globalThis;
  const _Error = Error, _JSON = JSON, _String = String, _Object = Object, _Promise = Promise, _Array = Array;
  const host = G.__agentctx_host;
  delete G.__agentctx_host;
  _Object.defineProperty(G, "__agentctx_builtin_Error", { value: _Error });

  function __agentctx_hostcall(name, args) {
    const reply = _JSON.parse(host(name, _JSON.stringify(args)));
    if (reply.error) {
      const error = new _Error(reply.error.message); // ctx.* throw plain Errors, as Yao does
      if (reply.error.name) error.name = reply.error.name; // a host function's own exception class
      throw error;
    }
    return reply.value === null ? undefined : reply.value;
  }

  // What Yao's ctx.Send / SendGroup check before anything else (agent/context/jsapi.go:167-215,
  // jsapi_helpers.go:12-147 at afab9c2), with Yao's words, then what the value was, as JavaScript names it.
  function __agentctx_kind(value) {
    if (value === null) return "null";
    if (_Array.isArray(value)) return "an array";
    if (value instanceof Date) return "a Date";
    return typeof value;
  }
  function __agentctx_shown(value) {
    const kind = __agentctx_kind(value);
    if (kind === "string" || kind === "number" || kind === "boolean") return kind + " " + _JSON.stringify(value);
    return kind;
  }
  function __agentctx_check_message(message, prefix, place) {
    if (typeof message === "string") return;
    if (message === null || (typeof message !== "object" && typeof message !== "function")) {
      throw new _Error(prefix + place + " must be a string or object (got " + __agentctx_shown(message) + ")");
    }
    if (typeof message === "function" || _Array.isArray(message) || message instanceof Date || message instanceof _String) {
      throw new _Error(prefix + place + " must be an object (got " + __agentctx_kind(message) + ")");
    }
    if (typeof message.type !== "string") {
      throw new _Error(prefix + place + ".type is required and must be a string (got " + __agentctx_shown(message.type) + ")");
    }
  }
  function __agentctx_check_group(group) {
    const prefix = "invalid group: ";
    if (group === null || typeof group !== "object" || _Array.isArray(group)) {
      throw new _Error(prefix + "group must be an object (got " + __agentctx_shown(group) + ")");
    }
    if (typeof group.id !== "string") {
      throw new _Error(prefix + "group.id is required and must be a string (got " + __agentctx_shown(group.id) + ")");
    }
    if (!_Array.isArray(group.messages)) {
      throw new _Error(prefix + "group.messages is required and must be an array (got " + __agentctx_shown(group.messages) + ")");
    }
    for (let i = 0; i < group.messages.length; i++) {
      const member = group.messages[i];
      if (member === null || typeof member !== "object" || _Array.isArray(member)) {
        throw new _Error(prefix + "group.messages[" + i + "] must be an object (got " + __agentctx_shown(member) + ")");
      }
      if (typeof member.type !== "string") {
        throw new _Error(prefix + "group.messages[" + i + "].type is required (got " + __agentctx_shown(member.type) + ")");
      }
    }
  }

  function __agentctx_format(value) {
    if (typeof value === "string") return value;
    if (value instanceof _Error) return value.name + ": " + value.message;
    if (value === undefined) return "undefined";
    if (typeof value === "function") return "[Function " + (value.name || "anonymous") + "]";
    try {
      const text = _JSON.stringify(value);
      return text === undefined ? _String(value) : text;
    } catch (error) {
      return _String(value);
    }
  }

  function __agentctx_console(level) {
    return function __agentctx_console_write() {
      const parts = [];
      for (let i = 0; i < arguments.length; i++) parts.push(__agentctx_format(arguments[i]));
      __agentctx_hostcall("console", [level, parts.join(" ")]);
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

  function __agentctx_make_ctx(fields) {
    const ctx = _Object.assign({}, fields);
    ctx.Send = function __agentctx_Send(message) {
      if (arguments.length < 1) throw new _Error("Send requires a message argument");
      __agentctx_check_message(message, "invalid message: ", "message");
      __agentctx_hostcall("send", [message]);
    };
    ctx.SendGroup = function __agentctx_SendGroup(group) {
      if (arguments.length < 1) throw new _Error("SendGroup requires a group argument");
      __agentctx_check_group(group);
      __agentctx_hostcall("send_group", [group]);
    };
    ctx.Flush = function __agentctx_Flush() {
      __agentctx_hostcall("flush", []);
    };
    ctx.send = ctx.Send;
    ctx.send_group = ctx.SendGroup;
    ctx.flush = ctx.Flush;
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

  G.__agentctx_define_global = function __agentctx_define_global(name) {
    G[name] = function __agentctx_global() {
      return __agentctx_hostcall("global", [name, _Object.values(arguments)]);
    };
  };

  function __agentctx_describe(thrown) {
    // a thrown value's code as it was (a number stays a number: `error.code === 1` in the Error hook)
    const raw = thrown !== null && typeof thrown === "object" ? thrown.code : undefined;
    const code = typeof raw === "string" || typeof raw === "number" || typeof raw === "boolean" ? raw : null;
    if (thrown instanceof _Error) {
      return { isError: true, name: thrown.name, message: _String(thrown.message), stack: thrown.stack || "", code };
    }
    let value = null;
    try {
      const text = _JSON.stringify(thrown);
      value = text === undefined ? null : _JSON.parse(text);
    } catch (error) {}
    return { isError: false, name: typeof thrown, message: __agentctx_format(thrown), stack: "", code, value };
  }

  G.__agentctx_call = function __agentctx_call(name, argsJson) {
    const args = _JSON.parse(argsJson);
    args[0] = __agentctx_make_ctx(args[0]);
    let result;
    try {
      result = G.__agentctx_hooks[name].apply(undefined, args);
    } catch (thrown) {
      return _JSON.stringify({ ok: false, thrown: __agentctx_describe(thrown) });
    }
    if (result instanceof _Promise) return _JSON.stringify({ ok: false, badReturn: "a Promise (async hooks are not supported; return the object)" });
    if (typeof result === "function") return _JSON.stringify({ ok: false, badReturn: "a function" });
    try {
      return _JSON.stringify({ ok: true, value: result === undefined ? null : result });
    } catch (error) {
      return _JSON.stringify({ ok: false, badReturn: "a value that is not JSON (" + _String(error.message) + ")" });
    }
  };

  G.__agentctx_source_of = function __agentctx_source_of(name) {
    return _String(G.__agentctx_hooks[name]);
  };
})();
