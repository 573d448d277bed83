/**
 * Dev/screenshot entry (not the widget): mounts the renderer on `#app` with the sample state.
 * Built by dev/screenshot.mjs; the widget's own entry is src/index.js.
 */
import { createRenderer } from "../index.js";
import { sampleState } from "./sample-state.js";

const app = /** @type {HTMLElement} */ (document.getElementById("app"));
const renderer = createRenderer(app);
renderer.update(sampleState());
Object.assign(globalThis, { actxRenderer: renderer });
