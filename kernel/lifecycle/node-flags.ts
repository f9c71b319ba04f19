/**
 * The node flags the service runs with: the Dockerfile's CMD and `npm start` pass them, and the
 * benchmark starts svc with them (test/kernel/readme.test.ts checks that all three agree).
 *
 * `--max-semi-space-size=16`: V8 sizes the young generation from the host's memory and let it grow
 * to 128 MB under load (64 MB committed even at idle) although a request's garbage dies young; at
 * 16 MB per semi-space peak RSS under 64 connections fell by ~140 MB at unchanged CPU per request
 * (bench/README.md "Memory"). No old-space limit is set: a hard limit would turn a burst of large
 * bodies into an out-of-memory crash instead of a 413.
 */
export const serviceNodeFlags: readonly string[] = ['--max-semi-space-size=16'];
