/**
 * The node flags the service runs with: the Dockerfile's CMD and `npm start` pass them, and the
 * benchmark starts svc with them (test/kernel/readme.test.ts checks that all three agree).
 *
 * `--max-semi-space-size=32`: V8 sizes the young generation from the host's memory and let it grow
 * to 128 MB under load (64 MB committed even at idle) although a request's garbage dies young.
 * 16 MB semi-spaces cut peak RSS under 64 connections by ~140 MB, but every scavenge costs about
 * the same whatever its size and each one is a pause a request may meet: 32 MB halves their
 * number (one connection: p99 −12 to −36 %, CPU −2 to −6 %) for more peak RSS (+24 MiB in an A/B,
 * 649 against 537–596 MiB in whole bench runs; bench/RESULTS.md 12:49, docs/decisions.md). No
 * old-space limit is set: a hard limit would turn a burst of large bodies into an out-of-memory
 * crash instead of a 413.
 */
export const serviceNodeFlags: readonly string[] = ['--max-semi-space-size=32'];
