// A small history-API router: /login, / (dashboards), /dashboards/:id,
// /dashboards/:id/branches/:ref, /chat, /usage, /tokens, /admin/mcp, /admin/users,
// /shared/:id (a shared conversation), /feedback (admins), /schedules, /superset (one's own
// Superset sessions).

export type Route =
  | { name: "login" }
  | { name: "dashboards" }
  | { name: "dashboard"; id: number }
  | { name: "branch"; id: number; ref: string }
  | { name: "chat" }
  | { name: "usage" }
  | { name: "tokens" }
  | { name: "mcp" }
  | { name: "users" }
  | { name: "shared"; id: string }
  | { name: "feedback" }
  | { name: "schedules" }
  | { name: "superset" }
  | { name: "missing" };

export function parse(pathname: string): Route {
  if (pathname === "/login") return { name: "login" };
  if (pathname === "/" || pathname === "/dashboards") return { name: "dashboards" };
  if (pathname === "/chat") return { name: "chat" };
  if (pathname === "/usage") return { name: "usage" };
  if (pathname === "/tokens") return { name: "tokens" };
  if (pathname === "/admin/mcp") return { name: "mcp" };
  if (pathname === "/admin/users") return { name: "users" };
  if (pathname === "/feedback") return { name: "feedback" };
  if (pathname === "/schedules") return { name: "schedules" };
  if (pathname === "/superset") return { name: "superset" };
  const shared = /^\/shared\/([A-Za-z0-9_-]{1,64})$/.exec(pathname);
  if (shared) return { name: "shared", id: shared[1] };
  const branch = /^\/dashboards\/(\d+)\/branches\/([A-Za-z0-9._/-]{1,64})$/.exec(pathname);
  if (branch) return { name: "branch", id: Number(branch[1]), ref: decodeURIComponent(branch[2]) };
  const match = /^\/dashboards\/(\d+)$/.exec(pathname);
  if (match) return { name: "dashboard", id: Number(match[1]) };
  return { name: "missing" };
}

export const router = $state<{ route: Route; path: string }>({
  route: parse(window.location.pathname),
  path: window.location.pathname,
});

export function navigate(path: string, replace = false): void {
  if (path === router.path) return;
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  router.path = path;
  router.route = parse(path);
}

window.addEventListener("popstate", () => {
  router.path = window.location.pathname;
  router.route = parse(window.location.pathname);
});

/** Use on <a> elements: client-side navigation, normal behaviour for modified clicks. */
export function link(node: HTMLAnchorElement) {
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    navigate(node.getAttribute("href") ?? "/");
  };
  node.addEventListener("click", onClick);
  return { destroy: () => node.removeEventListener("click", onClick) };
}
