// agentctx-widgets: links a Yao assistant's src/ modules inside QuickJS, the way Yao resolves them.
//
// agentctx_widgets/yao/typescript.py evaluates `(this file)(sucrase, spec)` as a hook source, after the
// prelude. Each module is transpiled here (sucrase keeps every line where it was), wrapped in a function
// and evaluated on its own, padded with newlines so that its first line is line `spec.files[path].start`
// of one numbering shared by every module: a stack frame's line then names the module and its `.ts` line
// (typescript.py maps them). Every function of ours is named __agentctx_* so stack readers skip it.
//
// Resolution, after gou runtime/v8/script.go (replaceImportCode 436-500, getImportPath 502-538): a
// relative import inside src/, with or without `.ts`/`.js`, or a folder's index; `@yao/runtime`
// (Process, time — globals in Yao too: it comments those imports out, script.go:446-464); `@yao/agent`
// (types only: an empty module). Anything else, or a path leaving src/, is a load error naming the
// importing file and line. Load errors leave as one Error whose message is MARK + JSON.
(function __agentctx_yao_link(sucrase, spec) {
  "use strict";
  const G = globalThis;
  const _Error = Error, _String = String, _stringify = JSON.stringify, _eval = eval;
  const MARK = "[agentctx-yao] ";
  const processHost = G.__agentctx_yao_process;
  delete G.__agentctx_yao_process;
  const registered = { __proto__: null };
  for (let i = 0; i < spec.processes.length; i++) registered[spec.processes[i]] = true;

  function __agentctx_fail(info) {
    throw new _Error(MARK + _stringify(info));
  }
  function __agentctx_here() {
    try { return _String(new _Error().stack); } catch (error) { return ""; }
  }

  // -- @yao/runtime ---------------------------------------------------------------------------------
  // Process(name, ...args) calls the Python callable registered under `name`; Yao's own words for an
  // unknown one are "Exception|404:<name> not found" (gou process/process.go:461).
  function __agentctx_Process(name) {
    if (typeof name !== "string") {
      throw new _Error("Process: the first argument must be a process name (a string), got " + typeof name);
    }
    if (registered[name] !== true) {
      throw new _Error("Exception|404:" + name + " not found (no Python callable is registered under " +
        _stringify(name) + " in processes=)");
    }
    const args = [name];
    for (let i = 1; i < arguments.length; i++) args[i] = arguments[i];
    return processHost.apply(undefined, args);
  }
  // Yao's runtime has more (log, http, Exception, agent, …): a name we do not provide throws where the
  // hook uses it (imports are read at each use), saying so, rather than being undefined.
  const provided = { __proto__: null, __esModule: true, Process: __agentctx_Process, time: G.time };
  const runtime = new Proxy(provided, {
    __proto__: null,
    get: function __agentctx_runtime_get(target, key) {
      if (typeof key !== "string" || key in target) return target[key];
      throw new _Error("\"@yao/runtime\"." + key + " is not available here (agentctx-widgets provides Process " +
        "and time)");
    },
  });
  const agentTypes = { __proto__: null, __esModule: true };
  G.Process = __agentctx_Process;

  // -- modules ----------------------------------------------------------------------------------------
  const cache = { __proto__: null };

  function __agentctx_dirname(path) {
    const at = path.lastIndexOf("/");
    return at === -1 ? [] : path.slice(0, at).split("/");
  }

  function __agentctx_resolve(from, specifier) {
    if (specifier === "@yao/runtime") return runtime;
    if (specifier === "@yao/agent") return agentTypes;
    function __agentctx_fail_import(why) {
      __agentctx_fail({ kind: "import", file: from, message: why, stack: __agentctx_here() });
    }
    const fail = __agentctx_fail_import;
    if (typeof specifier !== "string" || !(specifier.startsWith("./") || specifier.startsWith("../"))) {
      fail("cannot import " + _stringify(specifier) + ": only relative imports inside src/ (\"./basic\"), " +
        "\"@yao/runtime\" and \"@yao/agent\" resolve here");
    }
    const parts = __agentctx_dirname(from);
    const segments = specifier.split("/");
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i];
      if (segment === "." || segment === "") continue;
      if (segment === "..") {
        if (parts.length === 0) fail("cannot import " + _stringify(specifier) + ": it leaves src/");
        parts.pop();
      } else {
        parts.push(segment);
      }
    }
    const base = parts.join("/");
    const candidates = /\.(ts|js)$/.test(base) ? [base] :
      [base + ".ts", base + ".js", base + "/index.ts", base + "/index.js"];
    for (let i = 0; i < candidates.length; i++) {
      if (spec.files[candidates[i]] !== undefined) return __agentctx_load(candidates[i]);
    }
    fail("cannot import " + _stringify(specifier) + ": no module src/" + candidates.join(", src/"));
  }

  function __agentctx_transpile(path, file) {
    try {
      return sucrase.strip(file.source, "src/" + path, /\.ts$/.test(path));
    } catch (error) {
      let message = "", line = null, column = null;
      try { message = _String(error.message); } catch (e) {}
      try { if (error.loc) { line = error.loc.line; column = error.loc.column; } } catch (e) {}
      __agentctx_fail({ kind: "syntax", file: path, line: line, column: column, message: message });
    }
  }

  function __agentctx_load(path) {
    const cached = cache[path];
    if (cached !== undefined) return cached.exports;
    const file = spec.files[path];
    const module = { exports: {} };
    cache[path] = module;
    const code = __agentctx_transpile(path, file);
    if (code.split("\n").length > file.lines) {
      __agentctx_fail({ kind: "internal", file: path, message: "the transpiler moved lines (" +
        code.split("\n").length + " lines from " + file.lines + ")" });
    }
    // `void 0;` first: sucrase's "use strict" is then no directive, and the module runs sloppy, as Yao
    // runs a script (its TransformTS strips `export`, script.go:208-260). The entry hands back its hooks,
    // exported or not (Yao's index.ts declares `function Create` at its top level).
    const hooks = path === spec.entry
      ? "\n;return { __proto__: null, " +
        "Create: exports.Create || (typeof Create === \"function\" ? Create : undefined), " +
        "Next: exports.Next || (typeof Next === \"function\" ? Next : undefined) };"
      : "\n;";
    const text = "\n".repeat(file.start - 1) + "(function __yao_module(exports, require, module) {void 0;" + code +
      hooks + "\n})";
    let factory;
    try {
      factory = (0, _eval)(text);
    } catch (error) {
      let message = "", name = "SyntaxError", stack = "";
      try { message = _String(error.message); name = _String(error.name); stack = _String(error.stack); } catch (e) {}
      __agentctx_fail({ kind: "syntax", file: path, line: null, column: null, name: name, message: message,
        stack: stack });
    }
    const require = function __agentctx_require(specifier) { return __agentctx_resolve(path, specifier); };
    module.hooks = factory.call(undefined, module.exports, require, module);
    return module.exports;
  }

  try {
    __agentctx_load(spec.entry);
  } catch (error) {
    let message = "", name = "Error", stack = "";
    try { message = _String(error.message); name = _String(error.name); stack = _String(error.stack); } catch (e) {}
    if (message.startsWith(MARK)) throw error;
    __agentctx_fail({ kind: "threw", name: name, message: message, stack: stack });
  }
  const found = cache[spec.entry].hooks;
  if (found.Create !== undefined) G.Create = found.Create;
  if (found.Next !== undefined) G.Next = found.Next;
})
