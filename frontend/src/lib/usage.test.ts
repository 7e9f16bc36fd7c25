import { describe, expect, it } from "vitest";
import type { AdminUsageItem } from "./api/rest";
import { columns, toCsv } from "./usage";

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
