// Create adds a line for the model when the customer is upset; Next hands refunds to billing.
import { agent } from "@yao/agent";
import { toneOf, Tone } from "./tone";

interface Payload {
  messages: agent.Message[];
  completion?: { content?: string };
  tools?: any[];
  error?: string;
}

function Create(ctx: agent.Context, messages: agent.Message[], options: any): agent.Create | null {
  const last = messages[messages.length - 1];
  const tone: Tone = toneOf(String(last?.content ?? ""));
  if (tone === "neutral") {
    return null; // Yao goes on with the messages as they are
  }
  return {
    messages: [{ role: "system", content: "The customer is upset: apologise first." }, ...messages],
    metadata: { tone },
  };
}

function Next(ctx: agent.Context, payload: Payload, options: any): any {
  const answer = payload.completion?.content ?? "";
  if (/refund/i.test(answer)) {
    return { data: { handoff: "billing", tone: ctx.metadata?.tone ?? "neutral" } };
  }
  return null; // the standard response
}
