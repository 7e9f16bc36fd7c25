import { describe, expect, it } from "vitest";
import { parseSsoFragment } from "./ssoReturn";

describe("parseSsoFragment", () => {
  it("reads the one-time login code", () => {
    expect(parseSsoFragment("#login_code=abc-123_x")).toEqual({ loginCode: "abc-123_x" });
  });
  it("reads a refusal", () => {
    expect(parseSsoFragment("#error=NO_ROLE")).toEqual({ error: "NO_ROLE" });
  });
  it("ignores every other fragment", () => {
    expect(parseSsoFragment("")).toBeNull();
    expect(parseSsoFragment("#section-2")).toBeNull();
    expect(parseSsoFragment("#login_code=")).toBeNull();
  });
});
