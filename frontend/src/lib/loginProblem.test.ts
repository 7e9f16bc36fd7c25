import { describe, expect, it } from "vitest";
import { ApiError } from "./api/client";
import { loginProblem } from "./loginProblem";
import { en } from "./i18n/en";
import { ru } from "./i18n/ru";

describe("loginProblem", () => {
  it("says the password is wrong only when the backend refused the credentials", () => {
    expect(loginProblem(new ApiError(401, "UNAUTHORIZED", "bad"))).toBe("failed");
    expect(loginProblem(new ApiError(422, "VALIDATION_ERROR", "bad"))).toBe("failed");
  });

  it("tells a service that cannot serve from a wrong password", () => {
    for (const status of [500, 502, 503, 504]) {
      expect(loginProblem(new ApiError(status, `HTTP_${status}`, "Bad Gateway"))).toBe(
        "unavailable",
      );
    }
  });

  it("tells a network failure apart", () => {
    expect(loginProblem(new TypeError("Failed to fetch"))).toBe("network");
  });

  it("has its own message in each language", () => {
    expect(en["login.unavailable"]).toBeTruthy();
    expect(ru["login.unavailable"]).toBeTruthy();
    expect(en["login.unavailable"]).not.toBe(en["login.failed"]);
    expect(ru["login.unavailable"]).not.toBe(ru["login.failed"]);
  });
});
