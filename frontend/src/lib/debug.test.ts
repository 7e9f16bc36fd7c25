import { describe, expect, it } from "vitest";
import { callSummary, messageText, toolNames } from "./debug";
import { endsTurn, expandRow, normaliseTurn } from "./protocol";
import type { DebugCall } from "./api/rest";

const call = (usage: Record<string, unknown> | null): DebugCall => ({
  request: { model: "m", params: {}, messages: [], tools: [], omitted_messages: 0 },
  response: { content: "", tool_calls: [], finish_reason: "stop", usage },
  timing: { start_time: "2026-12-01T10:00:00Z", end_time: "2026-12-01T10:00:01Z", duration_ms: 1000 },
});

describe("debug records", () => {
  it("sums up duration and usage under either naming", () => {
    expect(callSummary(call({ input_tokens: 10, output_tokens: 2, total_tokens: 12 }))).toEqual({
      durationMs: 1000,
      usage: { input: 10, output: 2, total: 12 },
    });
    expect(callSummary(call({ prompt_tokens: 5, completion_tokens: 1 })).usage).toEqual({
      input: 5,
      output: 1,
      total: 0,
    });
    expect(callSummary(call(null)).usage).toBeNull();
  });

  it("reads message text and tool names", () => {
    expect(messageText({ content: "hi" })).toBe("hi");
    expect(messageText({ content: [{ type: "text", text: "a" }, { type: "image_url" }] })).toBe("a");
    expect(messageText({ content: null })).toBe("");
    expect(toolNames([{ type: "function", function: { name: "get_dashboard" } }])).toEqual(["get_dashboard"]);
  });

  it("keeps the turn's message id, streamed or from the history, and finds each turn's end", () => {
    const live = normaliseTurn([
      { role: "assistant", content: "", metadata: { type: "tool_start", tool: "x", call_id: "c", message_id: 7 } },
      { role: "assistant", content: "Done", metadata: { message_id: 7 } },
    ]);
    expect(live.map((i) => i.messageId)).toEqual([7, 7]);
    const stored = expandRow({ id: 9, role: "assistant", content: "x", metadata: { parts: [{ content: "x" }] } });
    expect(stored[0].messageId).toBe(9);
    const question = expandRow({ id: 8, role: "user", content: "q", metadata: {} });
    expect(question[0].messageId).toBeUndefined();
    const items = [...live, ...question, ...stored];
    expect(items.map((_, i) => endsTurn(items, i))).toEqual([false, true, false, true]);
  });
});
