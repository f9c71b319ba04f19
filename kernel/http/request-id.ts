import type { IncomingMessage } from 'node:http';

type Tagged = IncomingMessage & { svcRequestId?: string };

/** Gives the request its id (the HTTP front does, before any route runs). */
export function tagRequest(req: IncomingMessage, id: string): void {
  (req as Tagged).svcRequestId = id;
}

/** The id the kernel gave this request (set before any route runs). */
export function requestIdOf(req: IncomingMessage): string {
  return (req as Tagged).svcRequestId ?? '';
}
