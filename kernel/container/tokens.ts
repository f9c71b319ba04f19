import 'reflect-metadata';
import { container as rootContainer, type DependencyContainer, type InjectionToken } from 'tsyringe';

/**
 * A tsyringe token that keeps the type of the service it names.
 *
 * @example
 * export const ClockToken = defineToken<() => number>('kernel.clock');
 * container.register(ClockToken, { useValue: Date.now });
 * const now = resolve(container, ClockToken)();
 */
export interface Token<T> {
  readonly id: string;
  /** Phantom field: never set, only carries T for the compiler. */
  readonly __type?: T;
}

/** Names a service by `plugin.service`; the returned token is a plain string token for tsyringe. */
export function defineToken<T>(id: string): Token<T> {
  return Object.freeze({ id }) as Token<T>;
}

function raw<T>(token: Token<T>): InjectionToken<T> {
  return token.id;
}

/**
 * Resolves a typed token from a container.
 *
 * @example
 * const log = resolve(ctx.container, LoggerToken);
 */
export function resolve<T>(c: DependencyContainer, token: Token<T>): T {
  return c.resolve<T>(raw(token));
}

/** Resolves a token, or undefined when nothing is registered for it. */
export function tryResolve<T>(c: DependencyContainer, token: Token<T>): T | undefined {
  return c.isRegistered(raw(token), true) ? c.resolve<T>(raw(token)) : undefined;
}

/**
 * Binds a value to a typed token.
 *
 * @example
 * provide(ctx.container, ClockToken, Date.now);
 */
export function provide<T>(c: DependencyContainer, token: Token<T>, value: T): void {
  c.register<T>(raw(token), { useValue: value });
}

/** A fresh root container for one service instance (tests start several in one process). */
export function createRootContainer(): DependencyContainer {
  return rootContainer.createChildContainer();
}

export type { DependencyContainer };
