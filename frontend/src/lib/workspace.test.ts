import { beforeEach, describe, expect, it } from "vitest";
import { browse } from "./api/workspace";
import { collapseToolUpdates, expandRow, type ChatItem } from "./protocol";

const step = (status: string, extra = {}): ChatItem => ({
  role: "assistant",
  content: "",
  metadata: {
    type: "workflow_step",
    execution_id: 7,
    step_index: 2,
    name: "deploy",
    step_type: "tool_call",
    status,
    ...extra,
  } as ChatItem["metadata"],
});

describe("workflow steps in the history", () => {
  it("keep one row per step: a paused step's later state replaces it in place", () => {
    const confirm = { role: "assistant", content: "", metadata: { type: "confirm_required" } };
    const items = collapseToolUpdates([
      step("running"),
      confirm as ChatItem,
      step("completed", { output: { id: 1 } }),
      { role: "assistant", content: "Deployed.", metadata: {} },
    ]);
    expect(items.map((i) => i.metadata.type ?? "text")).toEqual(["workflow_step", "confirm_required", "text"]);
    expect((items[0].metadata as { status: string }).status).toBe("completed");
  });

  it("bring the badges of a user message back from metadata.resources", () => {
    const [item] = expandRow({
      role: "user",
      content: "compare",
      metadata: {
        resources: {
          files: [{ ref: "exports/a.csv", status: "included", truncated: true }],
          tables: [{ ref: "sample.orders", status: "refused", error: { code: "NOT_FOUND" } }, { nope: 1 }],
        },
      },
    });
    expect(item.resources).toEqual([
      { kind: "file", ref: "exports/a.csv", status: "included", truncated: true },
      { kind: "table", ref: "sample.orders", status: "refused", truncated: false },
    ]);
  });
});

describe("browse", () => {
  it("shows the folders and files directly under a prefix of a recursive listing", () => {
    const at = (key: string) => ({ key, size: 1, last_modified: "2026-12-01T00:00:00Z" });
    const items = [at("exports/a.csv"), at("exports/deep/b.csv"), at("exports/deep/c/d.csv"), at("top.txt")];
    expect(browse("", items)).toEqual({ folders: ["exports/"], files: [at("top.txt")] });
    expect(browse("exports/", items)).toEqual({ folders: ["exports/deep/"], files: [at("exports/a.csv")] });
  });
});

describe("the next message's options", () => {
  const stored = new Map<string, string>();
  beforeEach(() => {
    stored.clear();
    // The unit tests run in Node: a minimal Storage for the mode store.
    (globalThis as { localStorage?: unknown }).localStorage = {
      getItem: (k: string) => stored.get(k) ?? null,
      setItem: (k: string, v: string) => void stored.set(k, v),
      removeItem: (k: string) => void stored.delete(k),
      clear: () => stored.clear(),
    };
  });

  it("carry the mode, the selection and a chosen workflow, then start clean", async () => {
    const { selection, toggleFile, toggleTable, useWorkflow, turnOptions, clearSelection } = await import(
      "./resources.svelte"
    );
    const { mode, setMode } = await import("./mode.svelte");
    setMode("none");
    expect(turnOptions()).toEqual({ mode: "none" });
    toggleFile("exports/a.csv");
    toggleTable("sample.orders");
    toggleTable("sample.orders");
    toggleTable("sample.customers");
    useWorkflow("explore_table");
    expect(mode.current).toBe("yaml");
    expect(turnOptions()).toEqual({
      mode: "yaml",
      resources: { files: ["exports/a.csv"], tables: ["sample.customers"] },
      workflow: "explore_table",
    });
    clearSelection();
    expect(selection).toEqual({ files: [], tables: [], workflow: null });
  });
});
