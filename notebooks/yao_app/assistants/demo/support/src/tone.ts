// How the customer sounds, from their last message (imported by index.ts)
export type Tone = "upset" | "neutral";

const UPSET = ["angry", "unacceptable", "terrible"];

export function toneOf(text: string): Tone {
  const lower = text.toLowerCase();
  return UPSET.some((word) => lower.includes(word)) ? "upset" : "neutral";
}
