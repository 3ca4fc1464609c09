// Every router matches paths case-sensitively and strictly: "/Admin/status"
// or "/admin/status/" is no route, so no variant of a path can reach a
// handler that the exact path guards.
export const ROUTER_OPTIONS = { sensitive: true, strict: true } as const;
