// A tool card's heading in the person's language: what is happening while the call runs
// ("Searching the logs"), what it was once it has settled ("Logs"), done or failed alike.

import { en, type MessageKey } from "./i18n/en";

export type ToolPhase = "pending" | "done" | "error";

/** The dictionary key of the heading, or null for a tool the client has no words for. */
export function toolTitleKey(tool: string, phase: ToolPhase): MessageKey | null {
  const key = `toolTitle.${tool}.${phase === "pending" ? "running" : "settled"}`;
  return key in en ? (key as MessageKey) : null;
}
