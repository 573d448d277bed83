import { defineConfig } from "vitest/config";

// Renderer tests need a DOM: jsdom (DOMPurify does not sanitize under happy-dom).
//
// No test waits for a wall-clock budget: vitest's 5 s default failed `render-slices` on a loaded 2-core
// machine (it needs ~6 s of CPU there, alone). The timeouts below only end a test that hangs; a slow
// machine is never a failure.
export default defineConfig({
  test: {
    environment: "jsdom",
    include: ["test/**/*.test.js"],
    testTimeout: 600_000,
    hookTimeout: 600_000,
  },
});
