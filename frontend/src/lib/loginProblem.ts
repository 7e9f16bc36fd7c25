import { ApiError } from "./api/client";
import type { MessageKey } from "./i18n/en";

/** What the login page says about a failed sign-in: the credentials were refused, the service
 * answered but cannot serve (5xx: nginx before stopped backends, a backend without its
 * database), or nothing answered at all. */
export type LoginProblem = "failed" | "unavailable" | "network";

export function loginProblem(error: unknown): LoginProblem {
  if (!(error instanceof ApiError)) return "network";
  if (error.status >= 500 || error.status === 408 || error.status === 429) return "unavailable";
  return "failed";
}

export const LOGIN_MESSAGE: Record<LoginProblem, MessageKey> = {
  failed: "login.failed",
  unavailable: "login.unavailable",
  network: "login.network",
};
