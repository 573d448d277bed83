// @vitest-environment node
// No function is over 80 lines (issue 19, "Done when"), in the JavaScript as in the Python: every .js
// file of the front end's sources (src/, lab/) and of the package's QuickJS hooks (agentctx_widgets/
// hooks/*.js, agentctx_widgets/yao/*.js) is parsed with acorn and every function in it is measured,
// from the line it starts on to the line it ends on, both counted.
//
// Built output is not ours to split and is not read: lab/lib, node_modules, and any `static` or
// labextension folder.
//
// One exemption, and only one: the whole-file wrapper. A hook file that the host evaluates in QuickJS
// is one closure (js_prelude.js: everything a hook must not reach — the captured built-ins, the bridge —
// lives inside it, and a hook can only get what it returns), so its outermost function is as long as
// the file. It is exempt when the file's body is exactly one expression statement that is either that
// function called in place (an IIFE, js_prelude.js) or that function alone, which the host calls by
// appending the arguments (yao/typescript.py builds `(module_loader.js)(sucrase, spec)`; hooks/
// js_worker.py calls js_discover.js). Every function inside the wrapper is measured like any other.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "acorn";
import { describe, expect, it } from "vitest";

const MAX_LINES = 80;
const here = dirname(fileURLToPath(import.meta.url));
const jsRoot = join(here, "..");
const repoRoot = join(jsRoot, "..");

/** Folder names that hold built or installed code, never sources. */
const BUILT = new Set(["node_modules", "static", "labextension"]);

/** @param {string} dir @returns {string[]} every .js file under `dir`, built output left out */
function sourcesUnder(dir) {
  /** @type {string[]} */
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const isLabLib = entry.name === "lib" && relative(jsRoot, dir) === "lab";
      if (!BUILT.has(entry.name) && !entry.name.includes("labextension") && !isLabLib) found.push(...sourcesUnder(path));
    } else if (entry.isFile() && entry.name.endsWith(".js")) {
      found.push(path);
    }
  }
  return found;
}

/** @param {string} dir @returns {string[]} the .js files directly in `dir` */
function filesIn(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".js"))
    .map((entry) => join(dir, entry.name));
}

/** Every file the rule covers, as paths from the repository's root. */
function coveredFiles() {
  return [
    ...sourcesUnder(join(jsRoot, "src")),
    ...sourcesUnder(join(jsRoot, "lab")),
    ...filesIn(join(repoRoot, "agentctx_widgets", "hooks")),
    ...filesIn(join(repoRoot, "agentctx_widgets", "yao")),
  ].sort();
}

/** @param {string} source @returns {any} an ES module, or else a script (the QuickJS hook files) */
function parseSource(source) {
  const options = /** @type {const} */ ({ ecmaVersion: "latest", locations: true, allowHashBang: true });
  try {
    return parse(source, { ...options, sourceType: "module" });
  } catch {
    return parse(source, { ...options, sourceType: "script" });
  }
}

const FUNCTIONS = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);

/** @param {any} program @returns {any} the file's whole-file wrapper function, or null (see the top) */
function wholeFileWrapper(program) {
  if (program.body.length !== 1 || program.body[0].type !== "ExpressionStatement") return null;
  const expression = program.body[0].expression;
  if (FUNCTIONS.has(expression.type)) return expression;
  if (expression.type === "CallExpression" && FUNCTIONS.has(expression.callee.type)) return expression.callee;
  return null;
}

/** @param {any} key @returns {string | null} */
function keyName(key) {
  if (!key) return null;
  if (key.type === "Identifier" || key.type === "PrivateIdentifier") return key.name;
  if (key.type === "Literal") return String(key.value);
  return null;
}

/** The name a function is known by: its own, or the binding, property or method it is the value of.
 * @param {any} node @param {any} parent */
function functionName(node, parent) {
  if (node.id?.name) return node.id.name;
  if (!parent) return "(anonymous)";
  if (parent.type === "VariableDeclarator") return keyName(parent.id) ?? "(anonymous)";
  if (parent.type === "Property" || parent.type === "MethodDefinition" || parent.type === "PropertyDefinition") {
    return keyName(parent.key) ?? "(anonymous)";
  }
  if (parent.type === "AssignmentExpression") {
    const left = parent.left;
    return left.type === "MemberExpression" ? keyName(left.property) ?? "(anonymous)" : keyName(left) ?? "(anonymous)";
  }
  return "(anonymous)";
}

/**
 * Every function over `limit` lines in one source, the whole-file wrapper left out.
 * @param {string} source @param {string} file the name to report @param {number} [limit]
 * @returns {{where: string, name: string, lines: number}[]}
 */
export function longFunctions(source, file, limit = MAX_LINES) {
  const program = parseSource(source);
  const wrapper = wholeFileWrapper(program);
  /** @type {{where: string, name: string, lines: number}[]} */
  const found = [];
  /** @param {any} node @param {any} parent */
  const visit = (node, parent) => {
    if (FUNCTIONS.has(node.type) && node !== wrapper) {
      const lines = node.loc.end.line - node.loc.start.line + 1;
      if (lines > limit) found.push({ where: `${file}:${node.loc.start.line}`, name: functionName(node, parent), lines });
    }
    for (const key of Object.keys(node)) {
      if (key === "loc") continue;
      const value = node[key];
      for (const child of Array.isArray(value) ? value : [value]) {
        if (child && typeof child.type === "string") visit(child, node);
      }
    }
  };
  visit(program, null);
  return found;
}

/** @param {number} count @param {string} [indent] a function declaration of exactly `count` lines */
const functionOf = (count, indent = "") =>
  [`${indent}function f() {`, ...Array.from({ length: count - 2 }, (_, i) => `${indent}  g(${i});`), `${indent}}`].join("\n");

describe("function size", () => {
  it("measures a function from its first line to its last", () => {
    expect(longFunctions(functionOf(MAX_LINES), "a.js")).toEqual([]);
    expect(longFunctions(functionOf(MAX_LINES + 1), "a.js")).toEqual([{ where: "a.js:1", name: "f", lines: 81 }]);
  });

  it("names methods, arrows and anonymous functions where they start", () => {
    const body = Array.from({ length: 80 }, () => "  x();").join("\n");
    const source = `let a = 1;\nclass C {\n  run() {\n${body}\n  }\n}\nconst arrow = () => {\n${body}\n};\n` +
      `call(function () {\n${body}\n});\n`;
    expect(longFunctions(source, "b.js")).toEqual([
      { where: "b.js:3", name: "run", lines: 82 },
      { where: "b.js:86", name: "arrow", lines: 82 },
      { where: "b.js:168", name: "(anonymous)", lines: 82 },
    ]);
  });

  it("exempts only the whole-file wrapper, and measures the functions inside it", () => {
    const inner = functionOf(MAX_LINES + 1, "  ");
    const short = functionOf(3, "  ");
    // an IIFE that is the whole file (js_prelude.js), and a bare function the host calls (module_loader.js)
    expect(longFunctions(`(function () {\n${short}\n${functionOf(MAX_LINES, "  ")}\n})();\n`, "c.js")).toEqual([]);
    expect(longFunctions(`(function (a, b) {\n${short}\n${functionOf(MAX_LINES, "  ")}\n})\n`, "c.js")).toEqual([]);
    expect(longFunctions(`(function () {\n${inner}\n})();\n`, "c.js")).toEqual([{ where: "c.js:2", name: "f", lines: 81 }]);
    // not the whole file: a statement beside it, or a module's exported function, is measured
    expect(longFunctions(`"use strict";\n(function () {\n${short}\n${functionOf(MAX_LINES, "  ")}\n})();\n`, "d.js"))
      .toEqual([{ where: "d.js:2", name: "(anonymous)", lines: 85 }]);
    expect(longFunctions(`export default function () {\n${short}\n${functionOf(MAX_LINES, "  ")}\n}\n`, "e.js"))
      .toEqual([{ where: "e.js:1", name: "(anonymous)", lines: 85 }]);
  });

  it("covers the front end's sources and the QuickJS hook files, not built output", () => {
    const files = coveredFiles().map((path) => relative(repoRoot, path).split("\\").join("/"));
    for (const expected of ["js/src/delta.js", "js/src/protocol.js", "js/src/render/index.js", "js/lab/plugin.js",
      "agentctx_widgets/hooks/js_prelude.js", "agentctx_widgets/yao/module_loader.js"]) {
      expect(files).toContain(expected);
    }
    expect(files.filter((path) => /\/(node_modules|static|lib)\/|labextension/.test(path))).toEqual([]);
  });

  it(`has no function over ${MAX_LINES} lines`, () => {
    const long = coveredFiles().flatMap((path) =>
      longFunctions(readFileSync(path, "utf8"), relative(repoRoot, path).split("\\").join("/")));
    expect(long.map(({ where, name, lines }) => `${where} ${name} is ${lines} lines`)).toEqual([]);
  });
});
