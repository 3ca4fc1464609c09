// Puts an authentication guard in front of every route of a router, after all
// are registered, instead of a router.use() layer: a use() layer matches paths
// by its own rules (one once matched case-sensitively while the routes did
// not, so /ADMIN/... skipped the admin key). Here the guard runs exactly when
// a route does, and a route added later cannot exist without it. OPTIONS gets
// a guarded route per path too (allowedMethods answers it after the guard); a
// method a path does not have still gets 405 without a key, which tells only
// what the README lists. Never use router.param() on these routers: @koa/router
// puts param middleware in front of the guard (a test checks the order).
import type Router from '@koa/router';
import type { Middleware } from 'koa';

export function guardEveryRoute(router: Router, guard: Middleware): void {
  const prefix = router.opts.prefix ?? '';
  const paths = new Set<string>();
  for (const layer of router.stack) {
    layer.stack.unshift(guard);
    paths.add(String(layer.path).slice(prefix.length));
  }
  for (const p of paths) router.options(p, guard);
}
