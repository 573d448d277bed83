/**
 * The `execute` family (Yao 5a3f9a6a agent/output/message/types.go:78-86, 218-244): an action an external
 * agent already took, and its semantic sub-types `agent`, `todo`, `plan`, `job`, `question`. Shown as the
 * CUI 66cb383f shows them (packages/cui/chatbox/messages/Execute, AgentView, TodoView, PlanView, JobView,
 * QuestionView; English labels): a status icon, one label line, the input and output folded below.
 * The labels are the same as agentctx_widgets/output/execute_family.py's (transcript, static document).
 */
import { clip, h } from "./dom.js";

/** @typedef {import("./output-types.js").OutputMessage} OutputMessage */
/** @typedef {import("./output-types.js").OutputView} OutputView */

const STATUS_ICON = { running: "▶", completed: "✓", error: "✕" };
const JOB_LABELS = { create: "Job: Create", get: "Job: Status", list: "Job: List", output: "Job: Output", stop: "Job: Stop", update: "Job: Update" };
const AGENT_LABELS = { a2a: "AI Expert", "general-purpose": "Agent", Explore: "Explore", Plan: "Plan" };

/** @param {unknown} v @returns {v is Record<string, any>} */
const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/** `formatValue` (Execute/index.tsx:69-73). @param {unknown} v */
function formatValue(v) {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  try {
    return JSON.stringify(v, null, 2) ?? String(v);
  } catch {
    return String(v);
  }
}

/** `props.execute` when it is an object, else props (Execute:19-20). @param {Record<string, any>} props */
export function executeProps(props) {
  return isObject(props.execute) ? { ...props.execute } : props;
}

/** @param {Record<string, any>} props */
export function statusOf(props) {
  if (props.is_error === true) return "error";
  return typeof props.status === "string" && Object.hasOwn(STATUS_ICON, props.status) ? props.status : "running";
}

/** `props.summary || extractSummary(props)` (Execute:26, 75-94). @param {Record<string, any>} props */
export function summaryOf(props) {
  if (typeof props.summary === "string" && props.summary) return props.summary;
  if (isObject(props.input)) {
    const found = ["command", "file_path", "path"].map((k) => props.input[k]).find(Boolean) ?? "";
    return typeof found === "string" ? found : formatValue(found);
  }
  const raw = props.input_delta;
  if (typeof raw === "string" && raw) {
    for (const key of ["command", "file_path", "path", "url", "query"]) {
      const m = raw.match(new RegExp(`"${key}"\\s*:\\s*"([^"]*)"?`));
      if (m && m[1]) return m[1];
    }
  }
  return "";
}

/** `extractTodos` (TodoView/index.tsx:88-99). @param {Record<string, any>} props @returns {Array<[string, string]>} */
export function todosOf(props) {
  const input = props.input || props.output;
  const items = isObject(input) ? input.todos ?? input : input;
  if (!Array.isArray(items)) return [];
  return items.map((t) => {
    const item = isObject(t) ? t : {};
    return [formatValue(item.content || item.text || item.title || ""), formatValue(item.status || "pending")];
  });
}

/** `extractQuestions` (QuestionView/index.tsx:178-200). @param {Record<string, any>} props @returns {Array<[string, string[]]>} */
export function questionsOf(props) {
  let input = props.input;
  if (typeof input === "string") {
    try {
      input = JSON.parse(input);
    } catch {
      return [];
    }
  }
  const items = isObject(input) ? input.questions : null;
  if (!Array.isArray(items)) return [];
  return items
    .filter((q) => isObject(q) && q.question && Array.isArray(q.options) && q.options.length > 0)
    .map((q) => [formatValue(q.question), q.options.map((/** @type {any} */ o) => formatValue(isObject(o) ? o.label : o))]);
}

/** The header text each CUI component shows. @param {string} kind @param {Record<string, any>} props */
export function labelOf(kind, props) {
  if (kind === "agent") {
    const input = isObject(props.input) ? props.input : {};
    const sub = props.subagent_type || input.subagent_type || "";
    const name = typeof sub === "string" && Object.hasOwn(AGENT_LABELS, sub) ? AGENT_LABELS[/** @type {keyof typeof AGENT_LABELS} */ (sub)] : "Agent";
    const about = formatValue(input.description || input.prompt || props.summary || "");
    return about ? `${name}: ${about.length > 60 ? `${about.slice(0, 60)}...` : about}` : name;
  }
  if (kind === "todo") {
    const todos = todosOf(props);
    return `Todo (${todos.filter(([, s]) => s === "completed").length}/${todos.length})`;
  }
  if (kind === "plan") return (props.action ?? "enter") !== "enter" ? "Exit Plan Mode" : "Enter Plan Mode";
  if (kind === "job") return typeof props.action === "string" && Object.hasOwn(JOB_LABELS, props.action) ? JOB_LABELS[/** @type {keyof typeof JOB_LABELS} */ (props.action)] : "Job";
  if (kind === "question") {
    const qs = questionsOf(props);
    return qs.length === 1 ? qs[0][0] : qs.length ? `${qs.length} questions` : "Loading questions...";
  }
  const tool = typeof props.tool === "string" && props.tool ? props.tool : "...";
  const about = summaryOf(props);
  return about ? `${tool} ${about}` : tool;
}

/** `buildDetailText` (Execute:57-67). @param {Record<string, any>} props */
export const detailOf = (props) => [formatValue(props.input), formatValue(props.output)].filter(Boolean).join("\n");

/** Exit code and runner (ExecuteProps, types.go:239-242). @param {Record<string, any>} props */
export function factsOf(props) {
  const facts = [];
  if (Number.isInteger(props.exit_code)) facts.push(`exit ${props.exit_code}`);
  if (typeof props.runner === "string" && props.runner) facts.push(props.runner);
  return facts;
}

/** The folded part: a checklist (todo), questions with their options, or the input and output text. @param {string} kind @param {Record<string, any>} props */
function body(kind, props) {
  if (kind === "todo") {
    const todos = todosOf(props);
    if (!todos.length) return null;
    return h("ul", { className: "actx-exec-todos" }, todos.map(([text, status]) =>
      h("li", { className: "actx-exec-todo", "data-status": status }, [
        h("span", { className: "actx-exec-check", "aria-hidden": "true", text: status === "completed" ? "☑" : "☐" }),
        h("span", { text: clip(text, 500) }),
        status === "in_progress" ? h("span", { className: "actx-exec-badge", text: "in progress" }) : null,
      ])));
  }
  if (kind === "question") {
    const qs = questionsOf(props);
    if (!qs.length) return null;
    return h("div", { className: "actx-exec-questions" }, qs.map(([question, options]) =>
      h("div", { className: "actx-exec-question" }, [
        h("div", { text: question }),
        h("div", { className: "actx-exec-options" }, options.map((o) => h("span", { className: "actx-exec-option", text: o }))),
      ])));
  }
  const text = detailOf(props);
  return text ? h("pre", { className: "actx-exec-detail", text: clip(text, 20000) }) : null;
}

/**
 * One renderer for the family, by type.
 * @param {string} kind
 * @returns {(message: OutputMessage) => OutputView}
 */
export function executeRenderer(kind) {
  return (message) => {
    const el = h("div", { className: "actx-exec", "data-exec-type": kind });
    /** @param {OutputMessage} msg */
    const show = (msg) => {
      const props = executeProps(msg.props);
      const status = statusOf(props);
      const label = labelOf(kind, props);
      const facts = factsOf(props);
      const folded = body(kind, props);
      const head = [
        h("span", { className: `actx-exec-icon actx-exec-${status}`, "aria-hidden": "true", text: STATUS_ICON[/** @type {keyof typeof STATUS_ICON} */ (status)] }),
        h("span", { className: "actx-exec-label", text: clip(label, 300), title: clip(label, 2000) }),
        h("span", { className: "actx-exec-status", text: status }),
        ...facts.map((f) => h("span", { className: "actx-exec-fact", text: f })),
      ];
      el.setAttribute("data-status", status);
      if (!folded) {
        el.replaceChildren(h("div", { className: "actx-exec-head" }, head));
        return;
      }
      const wasOpen = el.querySelector(":scope > details")?.hasAttribute("open");
      const open = wasOpen ?? kind === "todo"; // TodoView opens its list, the others start folded
      el.replaceChildren(h("details", { open }, [h("summary", { className: "actx-exec-head" }, head), folded]));
    };
    show(message);
    return { el, update: (next) => (show(next), true) };
  };
}

export const EXECUTE_FAMILY = ["execute", "agent", "todo", "plan", "job", "question"];

/** @type {Record<string, (message: OutputMessage) => OutputView>} */
export const EXECUTE_RENDERERS = Object.fromEntries(EXECUTE_FAMILY.map((kind) => [kind, executeRenderer(kind)]));
