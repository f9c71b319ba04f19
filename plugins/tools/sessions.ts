import type { Client, JSONRPCMessage, Transport } from '@modelcontextprotocol/client';

/**
 * How long ending a session may take after svc is done with it: the notifications still on their
 * way (a `notifications/cancelled` for a call svc gave up on) and the `DELETE` of a stateful
 * Streamable HTTP session. It runs after the caller has its answer, so it delays nobody.
 */
export const endGraceMs = 5000;

/**
 * Notifications the SDK sends without waiting for them (its cancel of a call that timed out or
 * was aborted is one): `endSession` lets them arrive before the connection closes, which would
 * otherwise abort them in flight. The transport's own `send` is wrapped on this one instance.
 */
export function trackNotifications(t: Transport): Set<Promise<void>> {
  const inFlight = new Set<Promise<void>>();
  const send = t.send.bind(t);
  t.send = (message: JSONRPCMessage, options) => {
    const sent = send(message, options);
    if (!('id' in message)) {
      inFlight.add(sent);
      void sent.catch(() => {}).finally(() => inFlight.delete(sent));
    }
    return sent;
  };
  return inFlight;
}

/** A transport whose server keeps a session for svc (stateful Streamable HTTP). */
interface SessionTransport {
  sessionId?: string;
  terminateSession?: () => Promise<void>;
}

/**
 * Ends a session svc no longer needs: waits (bounded) for the notifications in flight, ends a
 * server-side session with `DELETE` (a server answering 405 keeps it; that is its choice), then
 * closes the client. Never throws: the call's outcome was decided before.
 */
export async function endSession(client: Client, transport: Transport & SessionTransport, inFlight: Set<Promise<void>>, graceMs = endGraceMs): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((done) => (timer = setTimeout(done, graceMs)));
  try {
    await Promise.race([Promise.allSettled([...inFlight]), grace]);
    if (transport.sessionId && transport.terminateSession) await Promise.race([transport.terminateSession().catch(() => {}), grace]);
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => {});
  }
}
