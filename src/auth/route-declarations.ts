import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

/** The handler and its controller, as the Reflector takes them. */
type Targets = Parameters<Reflector['getAllAndOverride']>[1];

/**
 * What a guard reads from a route's decorators, read once per handler and controller: the metadata is
 * fixed once the application has started, and reading it through the Reflector on every request cost
 * several metadata lookups each time. Keyed by controller, then handler, as one handler can serve
 * several controllers (an inherited method) whose class decorators differ.
 */
export class RouteDeclarations<T> {
  private readonly byController = new WeakMap<object, Map<object, T>>();

  constructor(private readonly read: (targets: Targets) => T) {}

  of(context: ExecutionContext): T {
    const controller = context.getClass();
    const handler = context.getHandler();
    let handlers = this.byController.get(controller);
    if (!handlers) this.byController.set(controller, (handlers = new Map()));
    let declared = handlers.get(handler);
    if (declared === undefined) {
      declared = this.read([handler, controller]);
      handlers.set(handler, declared);
    }
    return declared;
  }
}
