/**
 * A sample front-end state with every message kind, block type and output type, for the dev page,
 * the screenshots and the tests. Not part of the widget bundle.
 */
export const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAABgAAAAYCAIAAABvFaqvAAAAK0lEQVR4nGPQqLhDFcQw+Az6sECDKmgQGjT4Ans01kZjbVAF9misjeRYAwCjYJquc8rvdwAAAABJRU5ErkJggg==";

const ANSWER = `Here is what I found about **context windows**:

1. The model sees the *whole* context on each call.
2. Long tool outputs cost tokens, so summarise them.

| model | window |
| --- | ---: |
| small | 128K |
| large | 1.05M |

\`\`\`python
def estimate(words: int) -> int:
    return -(-words * 4 // 3)
\`\`\`

> Remote images are not loaded: ![chart](https://example.com/chart.png)

See [the docs](https://example.com/docs) and \`estimate_context_tokens\`.`;

/** @returns {any} */
export function sampleState() {
  return {
    seq: 7,
    header: { name: "demo-agent", count: 9, tokens: 96000, window: 128000, model: "gpt-6-mini" },
    context: [
      { type: 1, content: [{ type: "text", text: "You are a careful research assistant. Answer briefly." }] },
      {
        type: 2,
        content: [
          { type: "text", text: "What is a context window? Here is a screenshot and the notes." },
          { type: "binary", mimetype: "image/png", filename: "screenshot.png", content: PNG_BASE64 },
          { type: "binary", mimetype: "application/pdf", filename: "notes.pdf", content: "JVBERi0xLjQKJcfsj6IKNSAwIG9iago8PC9MZW5ndGggNiAwIFIvRmlsdGVyIC9GbGF0ZURlY29kZT4+" },
        ],
      },
      {
        type: 3,
        content: [
          { type: "thinking", text: "The user wants a definition. I should look up the window sizes first." },
          { type: "text", text: "Let me check the model table." },
          { type: "toolCall", callId: "call_1", name: "lookup_models", arguments: { family: "gpt-6", fields: ["window", "price"] } },
          { type: "toolCall", callId: "call_2", name: "fetch_page", arguments: "{\"url\": \"https://exa" },
        ],
      },
      { type: 4, callId: "call_1", content: [{ type: "text", text: "gpt-6: 1050000\ngpt-6-mini: 128000" }] },
      { type: 4, callId: "call_2", error: true, content: [{ type: "text", text: "fetch_page: arguments are not valid JSON" }] },
      { type: "compaction", at: "2026-11-29T12:00:00Z", removed: 12 },
      { type: 3, content: [{ type: "text", text: ANSWER }] },
      { type: 2, content: [{ type: "text", text: "And the price?" }] },
      { type: 3, content: [{ type: "text", text: "Checking prices" }], error: { message: "Rate limited by provider (429)", retry: "in 20 s" } },
    ],
    pending: {
      type: 3,
      content: [
        { type: "thinking", text: "Prices change often; I should say where they come from." },
        { type: "text", text: "Prices are listed per million tokens:\n\n- input: $0.40\n- output: $1.60\n\nThe cached input" },
      ],
    },
    outputs: {
      order: ["u1", "t1", "th1", "l1", "tc1", "e1", "img1", "a1", "v1", "act1", "ev1", "g1", "g2", "x1", "bad1"],
      messages: {
        u1: { id: "u1", type: "user_input", props: { content: "What is a context window?" }, done: true },
        t1: { id: "t1", type: "text", props: { content: "Processing... analyzing... **complete!**" }, done: true },
        th1: { id: "th1", type: "thinking", props: { content: "Analyzing complex query..." }, done: false },
        l1: { id: "l1", type: "loading", props: { message: "Searching knowledge base..." }, done: false },
        tc1: { id: "tc1", type: "tool_call", props: { id: "call_123", name: "search_docs", arguments: "{\"query\": \"context window\", \"k\": 3}" }, done: true },
        e1: { id: "e1", type: "error", props: { message: "I encountered an issue while processing your request.", code: "ERR_500", details: "upstream timeout after 30 s" }, done: true },
        img1: { id: "img1", type: "image", props: { url: `data:image/png;base64,${PNG_BASE64}`, alt: "A striped test image", width: 96, height: 96 }, done: true },
        a1: { id: "a1", type: "audio", props: { url: "data:audio/wav;base64,UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=", format: "wav", duration: 120.5, transcript: "Hello and welcome.", controls: true }, done: true },
        v1: { id: "v1", type: "video", props: { url: "javascript:alert(1)", format: "mp4", width: 320, height: 180 }, done: true },
        act1: { id: "act1", type: "action", props: { name: "open_panel", payload: { panel: "usage" } }, done: true },
        ev1: { id: "ev1", type: "event", props: { event: "turn_done", turn: 3 }, done: true },
        g1: { id: "g1", type: "text", props: { content: "**Context Information:**" }, group_id: "context_info", done: true },
        g2: { id: "g2", type: "text", props: { content: "Session: chat_42 · Locale: en" }, group_id: "context_info", done: true },
        x1: { id: "x1", type: "chart", props: { kind: "bar", values: [1, 2, 3] }, done: true },
        bad1: { id: "bad1", type: "image", props: { url: "data:text/html,<script>alert(1)</script>", alt: "not allowed" }, done: true },
      },
    },
  };
}
