import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it, vi } from "vitest";
import loader, { decode, importBundle, REF_PREFIX, resolveBundleModel } from "../src/loader.js";

const MODULES = Symbol.for("agentctx-widgets.bundle-modules");
const DIGEST = "0123456789abcdef0123456789abcdef";

/** A widget model with fixed traits (the view's or the FrontEndBundle's). */
function traitModel(traits, manager) {
  return { get: (name) => traits[name], widget_manager: manager };
}

/** A widget manager holding the given models by id; records each lookup. */
function manager(models) {
  return {
    asked: [],
    async get_model(id) {
      this.asked.push(id);
      if (!(id in models)) throw new Error(`widget model not found: ${id}`);
      return models[id];
    },
  };
}

/** What the kernel writes: gzip, then base64. */
const encode = (text) => gzipSync(Buffer.from(text, "utf8")).toString("base64");

/** Pretend the bundle with `digest` was already imported on this page (Node cannot import blob: URLs). */
function preload(digest, module) {
  const scope = /** @type {any} */ (globalThis);
  scope[MODULES] = new Map([[digest, Promise.resolve(module)]]);
}

afterEach(() => {
  delete (/** @type {any} */ (globalThis))[MODULES];
  document.head.replaceChildren();
  document.body.replaceChildren();
  vi.restoreAllMocks();
});

describe("resolveBundleModel", () => {
  it("follows the IPY_MODEL_ reference through the widget manager", async () => {
    const bundle = traitModel({ digest: DIGEST });
    const wm = manager({ abc: bundle });
    const view = traitModel({ _bundle: `${REF_PREFIX}abc` }, wm);
    expect(await resolveBundleModel(view)).toBe(bundle);
    expect(wm.asked).toEqual(["abc"]);
  });

  it("says what the trait held when it is not a reference", async () => {
    const view = traitModel({ _bundle: null }, manager({}));
    await expect(resolveBundleModel(view)).rejects.toThrow("_bundle is null, not a widget reference (IPY_MODEL_…)");
  });

  it("says so when the front end has no widget_manager.get_model", async () => {
    const view = traitModel({ _bundle: `${REF_PREFIX}abc` }, undefined);
    await expect(resolveBundleModel(view)).rejects.toThrow("this front end offers no widget_manager.get_model");
  });
});

describe("decode", () => {
  it("reads gzip+base64 (what the kernel sends) and plain text", async () => {
    const text = "export default { render() {} }; // é ✓ \u{1F600}";
    expect(await decode(encode(text), "gzip+base64")).toBe(text);
    expect(await decode(text, "")).toBe(text);
  });

  it("names an encoding it does not know", async () => {
    await expect(decode("abc", "brotli")).rejects.toThrow('unknown FrontEndBundle encoding "brotli"');
  });
});

describe("importBundle", () => {
  it("decodes, injects the CSS once and imports the code once per digest", async () => {
    const module = { default: { render: () => undefined } };
    const imported = [];
    const importer = async (code) => {
      imported.push(code);
      return module;
    };
    const bundle = traitModel({ digest: DIGEST, encoding: "gzip+base64", esm: encode("export default {}"),
                                css: encode(".x{color:red}") });
    expect(await importBundle(bundle, document, importer)).toBe(module);
    expect(await importBundle(bundle, document, importer)).toBe(module);
    expect(imported).toEqual(["export default {}"]);
    const styles = [...document.head.querySelectorAll("style")];
    expect(styles.map((s) => [s.dataset.agentctxBundle, s.textContent])).toEqual([[DIGEST, ".x{color:red}"]]);
  });

  it("tries again after a failed import", async () => {
    const bundle = traitModel({ digest: DIGEST, encoding: "", esm: "code", css: "" });
    const failing = async () => {
      throw new Error("no");
    };
    await expect(importBundle(bundle, document, failing)).rejects.toThrow("no");
    expect(await importBundle(bundle, document, async () => "second")).toBe("second");
  });

  it("refuses a digest that is not hex and a bundle without code, naming the value", async () => {
    await expect(importBundle(traitModel({ digest: "x\"]", esm: "e" }))).rejects.toThrow(
      "the FrontEndBundle's digest is \"x\\\"]\", not hex",
    );
    await expect(importBundle(traitModel({ digest: DIGEST, esm: "" }))).rejects.toThrow(
      `the FrontEndBundle ${DIGEST} holds no code`,
    );
    expect(document.head.querySelectorAll("style").length).toBe(0);
  });
});

describe("render", () => {
  it("hands the view to the bundle's render and returns its cleanup", async () => {
    const cleanup = () => undefined;
    const render = vi.fn(() => cleanup);
    preload(DIGEST, { default: { render } });
    const bundle = traitModel({ digest: DIGEST, esm: "export default {}", css: "" });
    const model = traitModel({ _bundle: `${REF_PREFIX}b1` }, manager({ b1: bundle }));
    const el = document.createElement("div");
    const props = { model, el, signal: new AbortController().signal };
    expect(await loader.render(props)).toBe(cleanup);
    expect(render.mock.calls).toEqual([[props]]);
  });

  it("does not render a view removed while the bundle loaded", async () => {
    const render = vi.fn(() => undefined);
    preload(DIGEST, { default: { render } });
    const bundle = traitModel({ digest: DIGEST, esm: "export default {}" });
    const model = traitModel({ _bundle: `${REF_PREFIX}b1` }, manager({ b1: bundle }));
    const controller = new AbortController();
    controller.abort();
    expect(await loader.render({ model, el: document.createElement("div"), signal: controller.signal })).toBe(undefined);
    expect(render).not.toHaveBeenCalled();
  });

  it("shows why it could not load, and the way out, in the view", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const model = traitModel({ _bundle: `${REF_PREFIX}gone` }, manager({}));
    const el = document.createElement("div");
    await loader.render({ model, el });
    expect(el.textContent).toBe(
      "[agentctx-widgets] could not load the front end from the shared bundle model: widget model not found: gone;" +
        " set AGENTCTX_WIDGETS_INLINE_BUNDLE=1 in the kernel before creating views to carry the bundle in each view.",
    );
  });
});
