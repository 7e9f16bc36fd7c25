// The REST calls of the resource panel: storage, datasources, workflows (typed by the schema).

import { http, unwrap, type Schemas } from "./client";

export type StoredFile = Schemas["FileItem"];
export type Datasource = Schemas["DatasourceRead"];
export type TableItem = Schemas["TableRead"];
export type ColumnItem = Schemas["ColumnRead"];
export type WorkflowDefinition = Schemas["DefinitionRead"];
export type Execution = Schemas["ExecutionRead"];

export async function listFiles(prefix: string): Promise<{ items: StoredFile[]; truncated: boolean }> {
  return unwrap(
    await http.GET("/api/storage/list", { params: { query: { prefix: prefix || undefined, limit: 1000 } } }),
  );
}

export async function listDatasources(): Promise<Datasource[]> {
  return unwrap(await http.GET("/api/datasources")).items;
}

export async function listTables(name: string): Promise<TableItem[]> {
  const path = { name };
  return unwrap(await http.GET("/api/datasources/{name}/tables", { params: { path } })).items;
}

export async function listColumns(name: string, table: string): Promise<ColumnItem[]> {
  const path = { name, table };
  return unwrap(await http.GET("/api/datasources/{name}/tables/{table}/columns", { params: { path } }))
    .items;
}

export async function workflowDefinitions(): Promise<WorkflowDefinition[]> {
  return unwrap(await http.GET("/api/workflow/definitions")).items;
}

export async function conversationExecutions(conversationId: string): Promise<Execution[]> {
  const path = { conversation_id: conversationId };
  return unwrap(
    await http.GET("/api/workflow/conversations/{conversation_id}/executions", { params: { path } }),
  ).items;
}

/** The folders and files directly under `prefix` of a recursive key listing. */
export function browse(prefix: string, items: StoredFile[]): { folders: string[]; files: StoredFile[] } {
  const folders = new Set<string>();
  const files: StoredFile[] = [];
  for (const item of items) {
    if (!item.key.startsWith(prefix)) continue;
    const rest = item.key.slice(prefix.length);
    const slash = rest.indexOf("/");
    if (slash >= 0) folders.add(prefix + rest.slice(0, slash + 1));
    else files.push(item);
  }
  return { folders: [...folders].sort(), files };
}
