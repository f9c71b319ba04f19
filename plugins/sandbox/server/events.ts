declare module '../../../kernel/index.js' {
  interface LogEvents {
    /** SPEC.md: the sandbox started; how many slots it runs and how limits are enforced. */
    'sandbox.started': { host: string; port: number; slots: number; limits: string };
    'sandbox.start_failed': { reason: string };
    /** A call left something behind that could not be cleaned up; the slot is out of use. */
    'sandbox.slot_quarantined': { slot: number; reason: string };
    'sandbox.exhausted': { slots: number };
    /** One call ended: command name (from the allow-list), never its arguments or messages. */
    'sandbox.call_ended': { slot: number; command: string; reason: string; duration_ms: number };
    /** Stopped (SIGTERM/SIGINT): the calls it ended, after their cleanup; whether its own control groups are gone. */
    'sandbox.stopped': { calls_ended: number; groups_removed: boolean };
  }
}
export {};
