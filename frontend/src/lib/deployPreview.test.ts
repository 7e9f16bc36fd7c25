import { describe, expect, it } from "vitest";
import type { Dashboard, Health } from "./api/rest";
import { deployPreview } from "./deployPreview";

const dashboard = {
  id: 2,
  title: "Discount watch",
  main_version_id: 5,
  status: "failing",
  branches: [{ id: 1, name: "fix", head_version_id: 9 }],
  environments: { staging: { version_id: 5, status: "failing" }, production: null },
} as unknown as Dashboard;
const health = {
  version_id: 5,
  latest_run: {
    version_id: 5,
    charts: [
      { chart_title: "Orders per region", status: "ok" },
      { chart_title: "Discounts by region", status: "failing" },
    ],
  },
} as unknown as Health;

describe("deployPreview", () => {
  it("names the title, main's version, where it goes, and a failing validation", () => {
    const preview = deployPreview(dashboard, { dashboard_id: 2, ref: "main", environment: "production" }, health);
    expect(preview).toEqual({
      title: "Discount watch",
      version: 5,
      source: { kind: "main" },
      environment: "production",
      status: "failing",
      failingCharts: ["Discounts by region"],
    });
  });

  it("a branch is its head version, not yet validated: no warning", () => {
    const preview = deployPreview(dashboard, { dashboard_id: 2, ref: "fix", environment: "staging" }, health);
    expect(preview.version).toBe(9);
    expect(preview.source).toEqual({ kind: "branch", name: "fix" });
    expect(preview.status).toBe("unknown");
    expect(preview.failingCharts).toEqual([]);
  });

  it("a version id that main is counts as main's validation", () => {
    expect(deployPreview(dashboard, { ref: "5", environment: "production" }).status).toBe("failing");
  });
});
