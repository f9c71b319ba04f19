import { createConsola, type ConsolaInstance, type LogObject } from 'consola';
import type { LogEvents, LogEventName } from './events.js';
import type { LogLevel } from '../config/schema.js';

type Level = Exclude<LogLevel, 'silent'>;

const rank: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };
const consolaType = { trace: 'trace', debug: 'debug', info: 'info', warn: 'warn', error: 'error', fatal: 'fatal' } as const;

/** Where JSON lines go; the process's stdout by default, a memory sink in tests. */
export interface LogSink {
  write(line: string): void;
}

/**
 * The only logging API: a typed event name plus its fixed fields. There is no call that takes a
 * free-form message or an object, so a request body or credential cannot be handed to it.
 *
 * @example
 * log.info('api.started', { host, port, shape: 'embedded', plugins: ['health'], version });
 */
export interface Logger {
  readonly level: LogLevel;
  enabled(level: Level): boolean;
  trace<E extends LogEventName>(event: E, fields: LogEvents[E]): void;
  debug<E extends LogEventName>(event: E, fields: LogEvents[E]): void;
  info<E extends LogEventName>(event: E, fields: LogEvents[E]): void;
  warn<E extends LogEventName>(event: E, fields: LogEvents[E]): void;
  error<E extends LogEventName>(event: E, fields: LogEvents[E]): void;
  fatal<E extends LogEventName>(event: E, fields: LogEvents[E]): void;
}

/**
 * A consola instance with one reporter that writes one JSON object per line:
 * `{"time":…,"level":…,"event":…,…fields}`. Level filtering happens here so that `fatal` and
 * `error` stay distinct (consola ranks them equal).
 */
export function createLogger(level: LogLevel, sink: LogSink = process.stdout): Logger {
  const consola: ConsolaInstance = createConsola({
    level: 999,
    reporters: [
      {
        log(obj: LogObject) {
          const [event, fields] = obj.args as [string, Record<string, unknown>];
          sink.write(JSON.stringify({ time: obj.date.toISOString(), level: obj.type, event, ...fields }) + '\n');
        },
      },
    ],
  });
  const threshold = rank[level];
  const emit =
    (lvl: Level) =>
    <E extends LogEventName>(event: E, fields: LogEvents[E]) => {
      if (rank[lvl] >= threshold) consola[consolaType[lvl]](event, fields);
    };
  return {
    level,
    enabled: (lvl) => rank[lvl] >= threshold,
    trace: emit('trace'),
    debug: emit('debug'),
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    fatal: emit('fatal'),
  };
}
