// What the person picked in the resource panel for the next message: files (storage keys),
// tables ("datasource.table") and, optionally, a named workflow. Sent as options.resources
// (and options.workflow), then cleared: the sent message keeps them as its badges.

import type { TurnOptions } from "./chat";
import { mode, setMode } from "./mode.svelte";

export const MAX_SELECTED = 20; // per kind, as the agent accepts

export const selection = $state<{ files: string[]; tables: string[]; workflow: string | null }>({
  files: [],
  tables: [],
  workflow: null,
});

function toggled(list: string[], value: string): string[] {
  if (list.includes(value)) return list.filter((v) => v !== value);
  return list.length >= MAX_SELECTED ? list : [...list, value];
}

export function toggleFile(key: string): void {
  selection.files = toggled(selection.files, key);
}

export function toggleTable(ref: string): void {
  selection.tables = toggled(selection.tables, ref);
}

/** Run this workflow with the next message (switches the mode to `yaml`). */
export function useWorkflow(name: string | null): void {
  selection.workflow = name;
  if (name) setMode("yaml");
}

export function clearSelection(): void {
  selection.files = [];
  selection.tables = [];
  selection.workflow = null;
}

/** The `options` of a new message: the mode and whatever is selected. */
export function turnOptions(): TurnOptions {
  const options: TurnOptions = { mode: mode.current };
  if (selection.files.length || selection.tables.length) {
    options.resources = { files: [...selection.files], tables: [...selection.tables] };
  }
  if (selection.workflow && mode.current === "yaml") options.workflow = selection.workflow;
  return options;
}
