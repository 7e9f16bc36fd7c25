// Reading a debug record (GET /api/debug/{message_id}) for the drawer.

import type { DebugCall } from "./api/rest";

export interface CallSummary {
  durationMs: number | null;
  usage: { input: number; output: number; total: number } | null;
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** Duration and token usage of a call (LangChain's usage names or the provider's). */
export function callSummary(call: DebugCall): CallSummary {
  const u = call.response.usage as Record<string, unknown> | null | undefined;
  const usage = u
    ? {
        input: num(u.input_tokens ?? u.prompt_tokens),
        output: num(u.output_tokens ?? u.completion_tokens),
        total: num(u.total_tokens),
      }
    : null;
  return { durationMs: call.timing.duration_ms ?? null, usage };
}

/** The text of a chat-completions message (string content, or its text blocks). */
export function messageText(message: Record<string, unknown>): string {
  const content = message.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((block) => (block && typeof block === "object" && "text" in block ? String(block.text) : ""))
      .join("");
  return content === null || content === undefined ? "" : JSON.stringify(content);
}

/** The names of the offered tools (OpenAI function tools). */
export function toolNames(tools: Record<string, unknown>[]): string[] {
  return tools.map((tool) => {
    const fn = tool.function as Record<string, unknown> | undefined;
    return String(fn?.name ?? tool.name ?? "?");
  });
}
