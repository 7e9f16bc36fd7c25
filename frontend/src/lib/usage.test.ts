import { describe, expect, it } from "vitest";
import type { AdminUsageItem } from "./api/rest";
import { columns, sortItems, toCsv } from "./usage";

function item(username: string, total: number, extra: Partial<AdminUsageItem> = {}): AdminUsageItem {
  return {
    user_id: `id-${username}`,
    username,
    input_tokens: total - 1,
    output_tokens: 1,
    total_tokens: total,
    model_calls: 1,
    estimated_calls: 0,
    ...extra,
  };
}

describe("usage tables", () => {
  it("sorts numbers as numbers and text as text, either way", () => {
    const items = [item("bob", 9), item("alice", 100), item("carol", 20)];
    expect(sortItems(items, "total_tokens", true).map((i) => i.username)).toEqual(["alice", "carol", "bob"]);
    expect(sortItems(items, "username", false).map((i) => i.username)).toEqual(["alice", "bob", "carol"]);
  });

  it("adds the grouping's column", () => {
    expect(columns("model")).toContain("model");
    expect(columns("user")).not.toContain("day");
  });

  it("exports CSV with quoting and no formula injection", () => {
    const csv = toCsv([item('=cmd,"x"', 5, { model: "m" })], "model");
    const [header, row] = csv.split("\r\n");
    expect(header).toBe("user_id,username,model,input_tokens,output_tokens,total_tokens,model_calls,estimated_calls");
    expect(row).toBe(`"id-=cmd,""x""","'=cmd,""x""",m,4,1,5,1,0`);
  });
});
