import { defineConfig } from "vitest/config";

// Renderer tests need a DOM: jsdom (DOMPurify does not sanitize under happy-dom).
export default defineConfig({
  test: {
    environment: "jsdom",
    include: ["test/**/*.test.js"],
  },
});
