// The REST calls the browser makes, one function each, typed by the generated schema.

import { http, unwrap, type Schemas } from "./client";

export type Conversation = Schemas["ConversationRead"];
export type ConversationHit = Schemas["ConversationListItem"];
export type HistoryMessage = Schemas["HistoryItem"];
export type LoginResult = Schemas["LoginResponse"];
export type DebugRecord = Schemas["DebugRecordRead"];
export type DebugCall = Schemas["DebugCall"];

export async function login(username: string, password: string): Promise<LoginResult> {
  return unwrap(await http.POST("/api/auth/login", { body: { username, password } }));
}

export type Providers = Schemas["ProvidersRead"];
export type AdminUser = Schemas["UserAdminRead"];

/** How people sign in here (asked before anyone is signed in). */
export async function providers(): Promise<Providers> {
  return unwrap(await http.GET("/api/auth/providers"));
}

/** The one-time code of an OIDC return, for the same answer a password login gives. */
export async function exchangeLoginCode(login_code: string): Promise<LoginResult> {
  return unwrap(await http.POST("/api/auth/oidc/exchange", { body: { login_code } }));
}

/** Every account with its source and last sign-in (admin). */
export async function listUsers(): Promise<AdminUser[]> {
  return unwrap(await http.GET("/api/admin/users")).items;
}

export async function listConversations(archived: boolean): Promise<Conversation[]> {
  const page = unwrap(
    await http.GET("/api/assistant/conversations", {
      params: { query: { archived, limit: 100 } },
    }),
  );
  return page.items;
}

/** One page of the caller's conversations matching `q` (title or message text). */
export async function searchConversations(
  q: string,
  archived: boolean,
  offset = 0,
  limit = 20,
): Promise<{ items: ConversationHit[]; total: number }> {
  return unwrap(
    await http.GET("/api/assistant/conversations", {
      params: { query: { q, archived, limit, offset } },
    }),
  );
}

export async function renameConversation(id: string, title: string): Promise<Conversation> {
  const path = { conversation_id: id };
  return unwrap(
    await http.PATCH("/api/assistant/conversations/{conversation_id}", {
      params: { path },
      body: { title },
    }),
  );
}

export async function createConversation(): Promise<Conversation> {
  return unwrap(await http.POST("/api/assistant/conversations", { body: {} }));
}

export async function getConversation(id: string): Promise<Conversation> {
  const path = { conversation_id: id };
  return unwrap(await http.GET("/api/assistant/conversations/{conversation_id}", { params: { path } }));
}

/** The whole history, oldest first (pages backwards through `before`). */
export async function history(id: string): Promise<HistoryMessage[]> {
  const items: HistoryMessage[] = [];
  let before: number | undefined;
  for (;;) {
    const page = unwrap(
      await http.GET("/api/assistant/conversations/{conversation_id}/history", {
        params: { path: { conversation_id: id }, query: { limit: 200, before } },
      }),
    );
    items.unshift(...page.items);
    if (!page.has_more || page.items.length === 0) return items;
    before = page.items[0].id;
  }
}

export async function archive(id: string): Promise<void> {
  const path = { conversation_id: id };
  unwrap(await http.DELETE("/api/assistant/conversations/{conversation_id}", { params: { path } }));
}

export async function restore(id: string): Promise<Conversation> {
  const path = { conversation_id: id };
  return unwrap(
    await http.POST("/api/assistant/conversations/{conversation_id}/restore", { params: { path } }),
  );
}

/** Whether an agent run holds the conversation (another tab, FR-015). */
export async function isActive(id: string): Promise<boolean> {
  const path = { conversation_id: id };
  const body = unwrap(
    await http.GET("/api/agent/conversations/{conversation_id}/active", { params: { path } }),
  );
  return body.active;
}

export type DashboardSummary = Schemas["DashboardSummary"];
export type Dashboard = Schemas["DashboardRead"];
export type Health = Schemas["HealthRead"];
export type ChartStatus = Schemas["ChartResultRead"];
export type ChartData = Schemas["ChartDataRead"];
export type DashboardStatus = NonNullable<DashboardSummary["status"]>;

export async function searchDashboards(
  query: string,
  status: Exclude<DashboardStatus, "unknown"> | "",
): Promise<DashboardSummary[]> {
  const page = unwrap(
    await http.GET("/api/dashboards", {
      params: { query: { query: query || undefined, status: status || undefined, limit: 100 } },
    }),
  );
  return page.items;
}

export async function getDashboard(id: number): Promise<Dashboard> {
  return unwrap(await http.GET("/api/dashboards/{dashboard_id}", { params: { path: { dashboard_id: id } } }));
}

export async function dashboardHealth(id: number): Promise<Health> {
  const path = { dashboard_id: id };
  return unwrap(await http.GET("/api/dashboards/{dashboard_id}/health", { params: { path } }));
}

/** One chart's rows (its SQL run read-only); a chart that cannot be drawn throws its ApiError.
 * With `ref` (a branch or version), that version's chart, run on staging. */
export async function chartData(dashboardId: number, chartKey: string, ref?: string): Promise<ChartData> {
  const path = { dashboard_id: dashboardId, chart_key: chartKey };
  const query = ref ? { ref } : {};
  return unwrap(
    await http.GET("/api/dashboards/{dashboard_id}/charts/{chart_key}/data", { params: { path, query } }),
  );
}

/** The dashboard with the version `ref` names (a branch name or a version id) in `version`. */
export async function getDashboardAt(id: number, ref: string): Promise<Dashboard> {
  const params = { path: { dashboard_id: id }, query: { ref } };
  return unwrap(await http.GET("/api/dashboards/{dashboard_id}", { params }));
}

export type DeployResult = Schemas["DeploymentResult"];

/** Deploy `ref` to `environment` (admin; validated first; audited by the backend). */
export async function deployDashboard(id: number, ref: string, environment: "staging" | "production"): Promise<DeployResult> {
  const params = { path: { dashboard_id: id } };
  return unwrap(await http.POST("/api/dashboards/{dashboard_id}/deployments", { params, body: { ref, environment, force: false } }));
}

/** Every model call of the turn stored in assistant row `messageId` (owner only). */
export async function debugRecord(messageId: number): Promise<DebugRecord> {
  const path = { message_id: messageId };
  return unwrap(await http.GET("/api/debug/{message_id}", { params: { path } }));
}

// -- usage and budgets ------------------------------------------------------------------------

export type UsageTokens = Schemas["UsageTokens"];
export type UsageMe = Schemas["UsageMe"];
export type AdminUsageItem = Schemas["AdminUsageItem"];
export type UsageGroup = "user" | "day" | "model";

/** The tokens one conversation's model calls used. */
export async function conversationUsage(id: string): Promise<UsageTokens> {
  const path = { conversation_id: id };
  const body = unwrap(
    await http.GET("/api/assistant/conversations/{conversation_id}", { params: { path } }),
  );
  return body.usage;
}

/** The caller's own usage: today, the budget, the last `days` days, top conversations. */
export async function myUsage(days = 30): Promise<UsageMe> {
  return unwrap(await http.GET("/api/usage/me", { params: { query: { days } } }));
}

export type AdminUsagePage = Schemas["AdminUsagePage"];
export type UsageSortKey =
  | "username"
  | "day"
  | "model"
  | "input_tokens"
  | "output_tokens"
  | "total_tokens"
  | "model_calls";
export interface AdminUsageQuery {
  from?: string;
  to?: string;
  sort?: UsageSortKey;
  order?: "asc" | "desc";
  offset?: number;
  limit?: number;
}

/** One page of everyone's usage grouped by user, day or model (admin), sorted by the server. */
export async function adminUsage(group_by: UsageGroup, query: AdminUsageQuery = {}): Promise<AdminUsagePage> {
  const params = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined && v !== ""));
  return unwrap(await http.GET("/api/admin/usage", { params: { query: { group_by, ...params } } }));
}

/** Every page of a grouping (for the CSV export), `limit` items a request. */
export async function adminUsageAll(
  group_by: UsageGroup,
  query: AdminUsageQuery = {},
  limit = 5000,
): Promise<AdminUsageItem[]> {
  const items: AdminUsageItem[] = [];
  for (let offset = 0; ; offset += limit) {
    const page = await adminUsage(group_by, { ...query, offset, limit });
    items.push(...page.items);
    if (!page.has_more) return items;
  }
}

/** Set (or, with null, remove) a user's daily token budget (admin). */
export async function setBudget(
  userId: string,
  dailyTokens: number | null,
): Promise<Schemas["UserBudgetRead"]> {
  return unwrap(
    await http.PUT("/api/admin/users/{user_id}/budget", {
      params: { path: { user_id: userId } },
      body: { daily_tokens: dailyTokens },
    }),
  );
}

export type AccessToken = Schemas["AccessTokenRead"];
export type CreatedAccessToken = Schemas["AccessTokenCreated"];
export type TokenScope = AccessToken["scope"];

/** The caller's own personal access tokens (never their secrets). */
export async function listTokens(): Promise<AccessToken[]> {
  return unwrap(await http.GET("/api/auth/tokens")).items;
}

/** A new token; its secret (`token`) is in this answer only. */
export async function createToken(
  name: string,
  scope: TokenScope,
  expiresInDays: number,
): Promise<CreatedAccessToken> {
  return unwrap(
    await http.POST("/api/auth/tokens", {
      body: { name, scope, expires_in_days: expiresInDays },
    }),
  );
}

export async function revokeToken(id: string): Promise<void> {
  unwrap(await http.DELETE("/api/auth/tokens/{token_id}", { params: { path: { token_id: id } } }));
}

export type SupersetSessions = Schemas["SessionsRead"];
export type SupersetEnvironment = "staging" | "production";

/** Whether the person has their own Superset session in each environment, and as whom. */
export async function supersetSessions(): Promise<SupersetSessions> {
  return unwrap(await http.GET("/api/superset/session"));
}

/** Connect one environment's Superset with the person's own account there (401: refused). */
export async function connectSuperset(
  environment: SupersetEnvironment,
  username: string,
  password: string,
): Promise<SupersetSessions> {
  return unwrap(
    await http.POST("/api/superset/session", { body: { environment, username, password } }),
  );
}

/** Forget the person's Superset sessions in every environment. */
export async function forgetSuperset(): Promise<void> {
  unwrap(await http.DELETE("/api/superset/session"));
}

export type McpServer = Schemas["McpServerStatus"];
export type McpServerCreate = Schemas["McpServerCreate"];

/** External MCP servers with their tools and whether they answer now (admin). */
export async function listMcpServers(): Promise<McpServer[]> {
  return unwrap(await http.GET("/api/admin/mcp-servers")).items;
}

export async function addMcpServer(body: McpServerCreate): Promise<void> {
  unwrap(await http.POST("/api/admin/mcp-servers", { body }));
}

export async function removeMcpServer(id: string): Promise<void> {
  unwrap(
    await http.DELETE("/api/admin/mcp-servers/{server_id}", { params: { path: { server_id: id } } }),
  );
}

export type Schedule = Schemas["ScheduleRead"];
export type ScheduleCreate = Schemas["ScheduleCreate"];
export type ScheduleRun = Schemas["ScheduleRunRead"];

/** The caller's own schedules, newest first. */
export async function listSchedules(): Promise<Schedule[]> {
  return unwrap(await http.GET("/api/schedules")).items;
}

export async function createSchedule(body: ScheduleCreate): Promise<Schedule> {
  return unwrap(await http.POST("/api/schedules", { body }));
}

export async function setScheduleEnabled(id: string, enabled: boolean): Promise<Schedule> {
  return unwrap(
    await http.PATCH("/api/schedules/{schedule_id}", {
      params: { path: { schedule_id: id } },
      body: { enabled },
    }),
  );
}

export async function deleteSchedule(id: string): Promise<void> {
  unwrap(await http.DELETE("/api/schedules/{schedule_id}", { params: { path: { schedule_id: id } } }));
}

/** One firing now; its progress shows in the runs. */
export async function runSchedule(id: string): Promise<string> {
  const started = unwrap(
    await http.POST("/api/schedules/{schedule_id}/run", { params: { path: { schedule_id: id } } }),
  );
  return started.run_id;
}

export async function scheduleRuns(id: string): Promise<ScheduleRun[]> {
  return unwrap(
    await http.GET("/api/schedules/{schedule_id}/runs", { params: { path: { schedule_id: id } } }),
  ).items;
}

/** The next three firings of a cron (in a time zone) or an interval, computed by the backend. */
export async function previewSchedule(body: Schemas["SchedulePreviewRequest"]): Promise<string[]> {
  return unwrap(await http.POST("/api/schedules/preview", { body })).upcoming;
}
