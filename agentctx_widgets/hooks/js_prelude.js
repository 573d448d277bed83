// agentctx-widgets: the host environment a JavaScript hook runs in (evaluated before the hook
// source). Everything private is named __agentctx_* so error stacks can skip these frames, and the
// built-ins we rely on are captured first: the seed's own `function Error(ctx, messages, error)`
// replaces the global Error.
(function () {
  const G = globalThis;
  const _Error = Error, _JSON = JSON, _String = String, _Object = Object, _Promise = Promise;
  const host = G.__agentctx_host;
  delete G.__agentctx_host;
  _Object.defineProperty(G, "__agentctx_builtin_Error", { value: _Error });

  function __agentctx_hostcall(name, args) {
    const reply = _JSON.parse(host(name, _JSON.stringify(args)));
    if (reply.error) {
      const error = new _Error(reply.error.message);
      error.name = reply.error.name || "Error";
      throw error;
    }
    return reply.value === null ? undefined : reply.value;
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
      __agentctx_hostcall("send", [message]);
    };
    ctx.SendGroup = function __agentctx_SendGroup(group) {
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

  // The deprecated Output API: `const output = new Output(ctx); output.Send(...)`.
  function Output(ctx) {
    if (!(this instanceof Output)) throw new _Error("Output must be called with new");
    __agentctx_hostcall("console", ["warn", "new Output(ctx) is deprecated; use ctx.Send / ctx.SendGroup / ctx.Flush"]);
    this.ctx = ctx;
  }
  Output.prototype.Send = function __agentctx_Output_Send(message) { this.ctx.Send(message); };
  Output.prototype.SendGroup = function __agentctx_Output_SendGroup(group) { this.ctx.SendGroup(group); };
  Output.prototype.Flush = function __agentctx_Output_Flush() { this.ctx.Flush(); };
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
    const code = thrown !== null && typeof thrown === "object" && thrown.code !== undefined ? _String(thrown.code) : null;
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
