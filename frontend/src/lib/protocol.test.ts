import { describe, expect, it } from "vitest";
import {
  collapseToolUpdates,
  expandRow,
  normaliseTurn,
  pendingConfirmation,
  type ChatItem,
} from "./protocol";

const tool = (type: string, call_id: string, extra = {}) => ({
  role: "assistant",
  content: "",
  metadata: { type, tool: "get_dashboard", call_id, ...extra },
});

const confirm = {
  role: "assistant",
  content: "Deploy dashboard 42 (main) to staging",
  metadata: {
    type: "confirm_required",
    thread_id: "t",
    tool: "deploy_dashboard",
    call_id: "c9",
    args: { dashboard_id: 42 },
    description: "Deploy dashboard 42 (main) to staging",
    allowed: ["confirm", "reject"],
  },
};

describe("normaliseTurn", () => {
  it("accepts a list, one dict or bare text, and drops unknown metadata types", () => {
    expect(normaliseTurn("hi")).toEqual([{ role: "assistant", content: "hi", metadata: {} }]);
    expect(normaliseTurn({ content: "x", metadata: { type: "weird" } })).toEqual([
      { role: "assistant", content: "x", metadata: {} },
    ]);
    expect(normaliseTurn([tool("tool_start", "a")])[0].metadata.type).toBe("tool_start");
    expect(normaliseTurn(null)).toEqual([]);
  });
});

describe("collapseToolUpdates", () => {
  it("keeps the latest state of each call in the place the call started", () => {
    const items = normaliseTurn([
      tool("tool_start", "a"),
      { role: "assistant", content: "text", metadata: {} },
      tool("tool_end", "a", { output: 1 }),
    ]);
    const collapsed = collapseToolUpdates(items);
    expect(collapsed.map((i) => i.metadata.type)).toEqual(["tool_end", undefined]);
  });
});

describe("expandRow and pendingConfirmation", () => {
  it("expands a persisted assistant turn into its parts and finds the open confirmation", () => {
    const rows = [
      { role: "user", content: "Deploy 42", metadata: { attachments: [{ name: "a.csv" }] } },
      { role: "assistant", content: "", metadata: { parts: [tool("tool_start", "x"), confirm] } },
    ];
    const items: ChatItem[] = rows.flatMap(expandRow);
    expect(items[0].files).toEqual(["a.csv"]);
    expect(items.map((i) => i.metadata.type)).toEqual([undefined, "tool_start", "confirm_required"]);
    expect(pendingConfirmation(items)?.call_id).toBe("c9");
  });

  it("sees no open confirmation once a decision was recorded after it", () => {
    const decision = {
      role: "user",
      content: "Confirmed: Deploy",
      metadata: { type: "decision", decision: "confirm", tool: "deploy_dashboard", call_id: "c9" },
    };
    const items = [
      ...expandRow({ role: "assistant", content: "", metadata: { parts: [confirm] } }),
      ...expandRow(decision),
    ];
    expect(items[1].metadata.type).toBe("decision");
    expect(pendingConfirmation(items)).toBeNull();
  });
});

describe("the diagnosis message", () => {
  const diagnosis = {
    role: "assistant",
    content: "Diagnosis: the chart selects a renamed column (confidence: high).",
    metadata: {
      type: "diagnosis",
      run_id: "r1",
      outcome: "draft",
      draft: {
        conclusion: { summary: "The chart selects a renamed column", confidence: "high" },
        analysis: [{ finding: "f", evidence_status: "SUPPORTED", tool_call_ids: ["c1"] }],
        action_plan: [],
        recommendations: [],
        limitations: { checked_scope: ["logs"], missing_info: [] },
      },
      progress: { checked: [{ tool_call_id: "c1", tool: "query_logs", evidence_status: "OK" }] },
    },
  };

  it("is kept with its metadata, live and from the history", () => {
    const [live] = normaliseTurn([diagnosis]);
    expect(live.metadata).toEqual(diagnosis.metadata);
    const parts = [tool("tool_end", "c1"), diagnosis];
    const items = expandRow({ role: "assistant", content: diagnosis.content, metadata: { parts } });
    expect(items.map((i) => i.metadata.type)).toEqual(["tool_end", "diagnosis"]);
  });
});
