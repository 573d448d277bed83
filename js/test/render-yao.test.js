// What a Yao stream shows in the view: blocks (group titles from metadata.block), message durations
// (metadata.duration_ms from message_end) and the execute family. Expected labels are worked out by hand
// from CUI 66cb383f packages/cui/chatbox/messages/{Execute,AgentView,TodoView,PlanView,JobView,QuestionView}.
import { afterEach, describe, expect, test } from "vitest";
import { EXECUTE_FAMILY, EXECUTE_RENDERERS } from "../src/render/execute.js";
import { createRenderer } from "../src/render/index.js";
import { formatDuration, messageDuration } from "../src/render/outputs.js";

/** @type {Array<{destroy: () => void}>} */
const mounted = [];
afterEach(() => {
  while (mounted.length) mounted.pop()?.destroy();
});

function mount() {
  const el = document.createElement("div");
  document.body.append(el);
  const renderer = createRenderer(el);
  mounted.push(renderer);
  return renderer;
}

/** @param {any[]} messages */
const outputs = (messages) => ({
  order: messages.map((m) => m.id),
  messages: Object.fromEntries(messages.map((m) => [m.id, { done: false, ...m }])),
});
/** @param {any} outs */
const state = (outs) => ({ header: {}, context: [], pending: null, outputs: outs });
/** @param {any} r @param {string} id */
const out = (r, id) => /** @type {HTMLElement} */ (r.root.querySelector(`[data-output-id="${id}"]`));
/** @param {any} r @param {any[]} messages */
const show = (r, messages) => r.update(state(outputs(messages)));
/** @param {HTMLElement} el */
const label = (el) => el.querySelector(".actx-exec-label")?.textContent;

describe("execute (Execute/index.tsx)", () => {
  test("a completed Bash action: tool + command, a check, the exit code, input and output folded", () => {
    const r = mount();
    show(r, [{ id: "1:M2", type: "execute", props: { tool: "Bash", tool_id: "toolu_1", input: { command: "ls -la" }, output: "a.txt\nb.txt", status: "completed", exit_code: 0, runner: "claude-cli" } }]);
    const el = out(r, "1:M2");
    expect(el.getAttribute("data-kind")).toBe("execute");
    expect(label(el)).toBe("Bash ls -la");
    expect(el.querySelector(".actx-exec")?.getAttribute("data-status")).toBe("completed");
    expect(el.querySelector(".actx-exec-icon")?.textContent).toBe("✓");
    expect([...el.querySelectorAll(".actx-exec-fact")].map((f) => f.textContent)).toEqual(["exit 0", "claude-cli"]);
    const details = /** @type {HTMLDetailsElement} */ (el.querySelector(".actx-exec > details"));
    expect(details.open).toBe(false); // Execute starts with showDetail false (:32)
    // buildDetailText: input as 2-space JSON, then the output string (:57-67)
    expect(details.querySelector(".actx-exec-detail")?.textContent).toBe('{\n  "command": "ls -la"\n}\na.txt\nb.txt');
  });

  test("running, then the completing merge updates the same element in place", () => {
    const r = mount();
    show(r, [{ id: "x", type: "execute", props: { tool: "Read", tool_id: "t", input_delta: '{"file_path": "/src/ma', status: "running" } }]);
    const node = out(r, "x").querySelector(".actx-exec");
    expect(label(out(r, "x"))).toBe("Read /src/ma"); // extractFromPartialJSON (:87-94)
    expect(node?.getAttribute("data-status")).toBe("running");
    expect(out(r, "x").querySelector(".actx-exec-icon")?.textContent).toBe("▶");
    r.update(state(outputs([{ id: "x", type: "execute", props: { tool: "Read", input: { file_path: "/src/main.py" }, output: "print(1)", status: "completed" } }])), { outputs: ["x"] });
    expect(out(r, "x").querySelector(".actx-exec")).toBe(node);
    expect(label(out(r, "x"))).toBe("Read /src/main.py");
    expect(node?.getAttribute("data-status")).toBe("completed");
  });

  test("props.execute is unwrapped; is_error and an unknown status", () => {
    const r = mount();
    show(r, [
      { id: "a", type: "execute", props: { execute: { tool: "Write", summary: "notes.md", status: "completed" } } },
      { id: "b", type: "execute", props: { tool: "Bash", status: "completed", is_error: true, exit_code: 2 } },
      { id: "c", type: "execute", props: { status: "weird" } },
    ]);
    expect(label(out(r, "a"))).toBe("Write notes.md");
    expect(out(r, "b").querySelector(".actx-exec")?.getAttribute("data-status")).toBe("error");
    expect(out(r, "b").querySelector(".actx-exec-icon")?.textContent).toBe("✕");
    expect(label(out(r, "c"))).toBe("..."); // no tool: '...' (:23); unknown status shown as running (:24)
    expect(out(r, "c").querySelector(".actx-exec")?.getAttribute("data-status")).toBe("running");
    expect(out(r, "c").querySelector("details")).toBeNull(); // nothing to fold
  });

  test("hostile text stays text", () => {
    const r = mount();
    show(r, [{ id: "h", type: "execute", props: { tool: "<img src=x onerror=alert(1)>", output: "<script>x()</script>", status: "completed" } }]);
    expect(out(r, "h").querySelector("img, script")).toBeNull();
    expect(label(out(r, "h"))).toBe("<img src=x onerror=alert(1)>");
  });
});

describe("semantic sub-types", () => {
  test("the family is one renderer per type", () => {
    expect(EXECUTE_FAMILY).toEqual(["execute", "agent", "todo", "plan", "job", "question"]);
    expect(Object.keys(EXECUTE_RENDERERS)).toEqual(EXECUTE_FAMILY);
  });

  test("agent, todo, plan, job and question labels as the CUI writes them (English)", () => {
    const r = mount();
    const long = "x".repeat(61);
    show(r, [
      { id: "ag", type: "agent", props: { tool: "Task", input: { subagent_type: "Explore", description: "find the tests" }, status: "running" } },
      { id: "ag2", type: "agent", props: { input: { prompt: long }, status: "completed" } },
      { id: "td", type: "todo", props: { action: "write", input: { todos: [{ content: "read", status: "completed" }, { content: "write", status: "in_progress" }] }, status: "completed" } },
      { id: "pl", type: "plan", props: { action: "exit", status: "completed" } },
      { id: "pe", type: "plan", props: { status: "completed" } },
      { id: "jb", type: "job", props: { action: "get", status: "completed" } },
      { id: "jx", type: "job", props: { action: "launch", status: "completed" } },
      { id: "qs", type: "question", props: { input: '{"questions": [{"question": "Which file?", "options": [{"label": "a.py"}, {"label": "b.py"}]}]}', status: "completed" } },
      { id: "q0", type: "question", props: { status: "running" } },
    ]);
    expect(label(out(r, "ag"))).toBe("Explore: find the tests");
    expect(label(out(r, "ag2"))).toBe(`Agent: ${"x".repeat(60)}...`); // truncate(description, 60)
    expect(label(out(r, "td"))).toBe("Todo (1/2)");
    const todo = /** @type {HTMLDetailsElement} */ (out(r, "td").querySelector("details"));
    expect(todo.open).toBe(true); // TodoView's showDetail starts true
    expect([...todo.querySelectorAll(".actx-exec-todo")].map((li) => li.getAttribute("data-status"))).toEqual(["completed", "in_progress"]);
    expect(todo.querySelector(".actx-exec-badge")?.textContent).toBe("in progress");
    expect(label(out(r, "pl"))).toBe("Exit Plan Mode");
    expect(label(out(r, "pe"))).toBe("Enter Plan Mode");
    expect(label(out(r, "jb"))).toBe("Job: Status");
    expect(label(out(r, "jx"))).toBe("Job");
    expect(label(out(r, "qs"))).toBe("Which file?");
    expect([...out(r, "qs").querySelectorAll(".actx-exec-option")].map((o) => o.textContent)).toEqual(["a.py", "b.py"]);
    expect(label(out(r, "q0"))).toBe("Loading questions...");
  });
});

describe("Yao blocks and durations", () => {
  const block = { id: "B1", type: "mixed" };
  const messages = [
    { id: "1:M1", type: "text", props: { content: "Looking" }, group_id: "1:B1", metadata: { block } },
    { id: "1:M2", type: "execute", props: { tool: "Bash", input: { command: "ls" }, status: "completed" }, group_id: "1:B1", metadata: { duration_ms: 1530, chunk_count: 2, status: "completed" } },
    { id: "1:M3", type: "text", props: { content: "after" }, metadata: { duration_ms: 0, chunk_count: 1 } },
    { id: "1:M4", type: "text", props: { content: "streamed" }, metadata: { duration_ms: 0, chunk_count: 3 } },
  ];

  test("one block box, titled from metadata.block; a duration chip on a message of more than one chunk", () => {
    const r = mount();
    show(r, messages);
    const boxes = r.root.querySelectorAll(".actx-group");
    expect(boxes.length).toBe(1);
    const box = /** @type {HTMLElement} */ (boxes[0]);
    expect(box.getAttribute("data-block-id")).toBe("B1");
    expect(box.querySelector(".actx-block-name")?.textContent).toBe("Block B1");
    expect(box.querySelector(".actx-block-type")?.textContent).toBe("mixed");
    expect([...box.querySelectorAll("[data-output-id]")].map((e) => e.getAttribute("data-output-id"))).toEqual(["1:M1", "1:M2"]);
    expect(out(r, "1:M2").querySelector(":scope > .actx-duration")?.textContent).toBe("1.5 s");
    expect(out(r, "1:M1").querySelector(".actx-duration")).toBeNull();
    expect(out(r, "1:M3").querySelector(".actx-duration")).toBeNull(); // a Send: one chunk
    expect(out(r, "1:M4").querySelector(".actx-duration")).toBeNull(); // no measured time: no "0 ms" chip
    expect(out(r, "1:M3").parentElement?.classList.contains("actx-output-list")).toBe(true);
  });

  test("block_end's label-less update: the title gains the block's duration and status", () => {
    const r = mount();
    show(r, messages);
    const ended = messages.map((m) => (m.id === "1:M1" ? { ...m, metadata: { block: { ...block, label: "Searching", duration_ms: 65000, status: "partial" } } } : m));
    r.update(state(outputs(ended)), { outputs: ["1:M1"] });
    const title = /** @type {HTMLElement} */ (r.root.querySelector(".actx-group-title"));
    expect(title.querySelector(".actx-block-name")?.textContent).toBe("Searching");
    expect(title.querySelector("[data-testid=actx-block-duration]")?.textContent).toBe("1m 05s");
    expect(title.querySelector(".actx-block-status")?.textContent).toBe("partial");
  });

  test("a seed group (no metadata.block) keeps its plain title", () => {
    const r = mount();
    show(r, [{ id: "g.0", type: "text", props: { content: "x" }, group_id: "g" }]);
    expect(r.root.querySelector(".actx-group-title")?.textContent).toBe("group g");
  });

  test("messageDuration", () => {
    expect([messageDuration(undefined), messageDuration({ duration_ms: 5 }), messageDuration({ duration_ms: 5, chunk_count: 1 }),
      messageDuration({ duration_ms: 5, chunk_count: 2 }), messageDuration({ duration_ms: -1 }), messageDuration({ duration_ms: "5" })])
      .toEqual([null, 5, null, 5, null, null]);
  });

  test("formatDuration", () => {
    expect([formatDuration(1), formatDuration(999), formatDuration(1000), formatDuration(1530), formatDuration(59949), formatDuration(60000), formatDuration(125400)])
      .toEqual(["1 ms", "999 ms", "1.0 s", "1.5 s", "59.9 s", "1m 00s", "2m 05s"]);
  });
});
