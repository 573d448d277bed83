// The TypeScript transpiler that Yao assistants' hooks go through inside QuickJS (no Node at run time):
// sucrase's `typescript` + `imports` transforms, which keep every line where it was, so an error in a hook
// points at its `.ts` line. Bundled by build.mjs as an IIFE (agentctx_widgets/static/ts_transpile.js)
// that leaves one binding, `__agentctx_sucrase`; agentctx_widgets/yao/module_loader.js calls it.
import { transform } from "sucrase";

/**
 * One module's JavaScript: types stripped, `import`/`export` turned into `require`/`exports`.
 * @param {string} code the module's source
 * @param {string} filePath its path, for the transpiler's messages
 * @param {boolean} typescript strip TypeScript (a `.ts` file) or only rewrite the imports (`.js`)
 * @returns {string}
 */
export function strip(code, filePath, typescript) {
  return transform(code, {
    transforms: typescript ? ["typescript", "imports"] : ["imports"],
    filePath,
    disableESTransforms: true, // QuickJS-NG runs modern syntax as written
    keepUnusedImports: false, // an import only used as a type disappears, as TypeScript elides it
  }).code;
}
