import { afterEach, describe, expect, test } from "vitest";
import { SLICE_SIZE, WINDOW_PAGES } from "../src/render/context.js";
import { createRenderer } from "../src/render/index.js";

/** A hand-run scheduler: tasks wait in a queue until the test runs them. */
function manualScheduler() {
  /** @type {Array<{task: () => void, live: boolean}>} */
  const queue = [];
  return {
    queue,
    /** @param {() => void} task */
    schedule(task) {
      const entry = { task, live: true };
      queue.push(entry);
      return () => {
        entry.live = false;
      };
    },
    /** Run the next task; false when none is waiting. */
    step() {
      const entry = queue.shift();
      if (!entry) return false;
      if (entry.live) entry.task();
      return true;
    },
    live() {
      return queue.filter((e) => e.live).length;
    },
  };
}

/** @type {Array<{destroy: () => void}>} */
const mounted = [];
afterEach(() => {
  while (mounted.length) mounted.pop()?.destroy();
});

/** @param {import("../src/render/index.js").RendererOptions} options */
function mount(options) {
  const el = document.createElement("div");
  document.body.append(el);
  const renderer = createRenderer(el, options);
  mounted.push(renderer);
  return renderer;
}

/** @param {number} n */
const many = (n) => Array.from({ length: n }, (_, i) => ({ type: 2 + (i % 2), content: [{ type: "text", text: `message **${i}**` }] }));
/** @param {any[]} context */
const state = (context) => ({ seq: 1, header: { name: "t" }, context, pending: null, outputs: { order: [], messages: {} } });
/** @param {{root: HTMLElement}} r */
const shownIndexes = (r) => Array.from(r.root.querySelectorAll("[data-testid=actx-context] > [data-index]")).map((el) => Number(el.getAttribute("data-index")));
/** @param {number} from @param {number} to */
const range = (from, to) => Array.from({ length: to - from }, (_, i) => from + i);

describe("a page rendered in slices", () => {
  test("the first screen is one slice of the newest messages; the rest of the page follows, one slice a task", () => {
    const s = manualScheduler();
    const r = mount({ schedule: s.schedule, IntersectionObserver: null });
    r.update(state(many(10_000)));
    expect(shownIndexes(r)).toEqual(range(10_000 - SLICE_SIZE, 10_000));
    expect(r.root.querySelector("[data-index='9999'] strong")?.textContent).toBe("9999");
    let tasks = 0;
    while (s.step()) tasks += 1;
    expect(tasks).toBe(Math.ceil((60 - SLICE_SIZE) / SLICE_SIZE));
    expect(shownIndexes(r)).toEqual(range(10_000 - 60, 10_000)); // in order, none twice
    const more = /** @type {HTMLButtonElement} */ (r.root.querySelector("[data-testid=actx-load-more]"));
    expect(more.textContent).toContain("9940 more");
  });

  test("asking for more while a page is still coming extends it by one page, still in slices", () => {
    const s = manualScheduler();
    const r = mount({ schedule: s.schedule, IntersectionObserver: null });
    r.update(state(many(500)));
    /** @type {HTMLButtonElement} */ (r.root.querySelector("[data-testid=actx-load-more]")).click();
    expect(shownIndexes(r)).toHaveLength(2 * SLICE_SIZE); // the click renders one slice at once
    while (s.step());
    expect(shownIndexes(r)).toEqual(range(500 - 120, 500));
  });

  test("every message is reachable up and back down, and the window never holds more than maxRendered", () => {
    const s = manualScheduler();
    const r = mount({ schedule: s.schedule, maxRendered: 180, IntersectionObserver: null });
    r.update(state(many(1_000)));
    const more = /** @type {HTMLButtonElement} */ (r.root.querySelector("[data-testid=actx-load-more]"));
    const later = /** @type {HTMLButtonElement} */ (r.root.querySelector("[data-testid=actx-load-later]"));
    /** @type {Set<number>} */
    const seen = new Set();
    let largest = 0;
    const settle = () => {
      while (s.step()) {
        const shown = shownIndexes(r);
        largest = Math.max(largest, shown.length);
        expect(shown).toEqual(range(shown[0], shown[0] + shown.length)); // contiguous, in order
        shown.forEach((i) => seen.add(i));
      }
    };
    settle();
    expect(later.hidden).toBe(true);
    for (let clicks = 0; clicks < 100 && !more.hidden; clicks += 1) {
      more.click();
      settle();
    }
    expect(more.hidden).toBe(true);
    expect(shownIndexes(r)).toEqual(range(0, 180));
    expect(later.hidden).toBe(false);
    expect(later.textContent).toBe("↓ Show later messages (820 more)");
    expect(seen.size).toBe(1_000);
    for (let clicks = 0; clicks < 100 && !later.hidden; clicks += 1) {
      later.click();
      settle();
    }
    expect(later.hidden).toBe(true);
    expect(shownIndexes(r)).toEqual(range(820, 1_000));
    expect(largest).toBeLessThanOrEqual(180 + SLICE_SIZE);
  });

  test("an append is shown while the window shows the newest message, counted below it otherwise", () => {
    const s = manualScheduler();
    const r = mount({ schedule: s.schedule, maxRendered: 180, IntersectionObserver: null });
    let ctx = many(1_000);
    r.update(state(ctx));
    while (s.step());
    ctx = [...ctx, { type: 2, content: [{ type: "text", text: "new 1000" }] }];
    r.update(state(ctx), { context: [1000] });
    expect(shownIndexes(r).at(-1)).toBe(1000);
    const more = /** @type {HTMLButtonElement} */ (r.root.querySelector("[data-testid=actx-load-more]"));
    for (let clicks = 0; clicks < 4; clicks += 1) {
      more.click();
      while (s.step());
    }
    expect(shownIndexes(r).at(-1)).toBeLessThan(1000); // scrolled far up: the newest fell out of the window
    ctx = [...ctx, { type: 2, content: [{ type: "text", text: "new 1001" }] }];
    const lastShown = /** @type {number} */ (shownIndexes(r).at(-1));
    r.update(state(ctx), { context: [1001] });
    expect(shownIndexes(r).at(-1)).toBe(lastShown);
    expect(r.root.querySelector("[data-testid=actx-load-later]")?.textContent).toBe(`↓ Show later messages (${1001 - lastShown} more)`);
  });

  test("a new context mid-page cancels the old page's slices", () => {
    const s = manualScheduler();
    const r = mount({ schedule: s.schedule, IntersectionObserver: null });
    r.update(state(many(1_000)));
    expect(s.live()).toBe(1);
    r.update(state(many(5))); // "all": a rebuild
    expect(s.live()).toBe(0);
    while (s.step());
    expect(shownIndexes(r)).toEqual(range(0, 5));
  });

  test("by default the window holds WINDOW_PAGES pages of 60", () => {
    const s = manualScheduler();
    const r = mount({ schedule: s.schedule, IntersectionObserver: null });
    r.update(state(many(WINDOW_PAGES * 60 + 100)));
    const more = /** @type {HTMLButtonElement} */ (r.root.querySelector("[data-testid=actx-load-more]"));
    for (let clicks = 0; clicks < 100 && !more.hidden; clicks += 1) {
      more.click();
      while (s.step());
    }
    expect(shownIndexes(r)).toEqual(range(0, WINDOW_PAGES * 60));
  });

  test("destroy() cancels the slice still to come", () => {
    const s = manualScheduler();
    const r = mount({ schedule: s.schedule, IntersectionObserver: null });
    r.update(state(many(1_000)));
    expect(s.live()).toBe(1);
    r.destroy();
    expect(s.live()).toBe(0);
  });

  test("the sentinel does not ask for another page while one is still coming, and re-checks when it is done", () => {
    /** @type {Array<(entries: any[]) => void>} */
    const callbacks = [];
    let observes = 0;
    class FakeObserver {
      /** @param {(entries: any[]) => void} cb */
      constructor(cb) {
        callbacks.push(cb);
      }
      observe() {
        observes += 1;
      }
      unobserve() {}
      disconnect() {}
    }
    const s = manualScheduler();
    const r = mount({ schedule: s.schedule, IntersectionObserver: /** @type {any} */ (FakeObserver) });
    r.update(state(many(1_000)));
    callbacks[0]([{ isIntersecting: true }]); // before the view scrolled to its end
    while (s.step());
    expect(shownIndexes(r)).toHaveLength(60);
    const before = observes;
    callbacks[0]([{ isIntersecting: true }]); // the page is complete: now it loads the next
    while (s.step());
    expect(shownIndexes(r)).toEqual(range(1_000 - 120, 1_000));
    expect(observes).toBeGreaterThan(before);
  });

  test("the real scheduler (a later task) completes the page without help", async () => {
    const r = mount({ IntersectionObserver: null });
    r.update(state(many(200)));
    expect(shownIndexes(r)).toHaveLength(SLICE_SIZE);
    // wait for the state, not for a number of polls: a loaded machine runs the slices later, not never
    while (shownIndexes(r).length < 60) await new Promise((resolve) => setTimeout(resolve, 0));
    expect(shownIndexes(r)).toEqual(range(140, 200));
  });
});
