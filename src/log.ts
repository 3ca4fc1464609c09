// Structured JSON logs (pino). Keys, audio and transcripts are never logged:
// callers pass only ids, sizes, durations and codes.
import pino, { type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'stt-gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['req.headers.authorization', 'authorization', 'apiKey', 'key'], censor: '[redacted]' },
    },
    destination,
  );
}
