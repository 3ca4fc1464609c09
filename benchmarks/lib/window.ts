// The encoder window ours runs in for a bench run: the server's default, or
// BENCH_ENCODER_WINDOW (e.g. `tail`, the documented fast choice) so the fast
// choice is timed too. Every ratio the bench prints is then read within one
// window: whisper-server is also timed with ours' window as its audio_ctx.
import { DEFAULT_ENCODER_WINDOW, ENCODER_WINDOWS, type EncoderWindow } from '../../src/stt/local/encoder-window';

function chosen(value: string | undefined): EncoderWindow {
  if (value === undefined || value === '') return DEFAULT_ENCODER_WINDOW;
  const w = ENCODER_WINDOWS.find((name) => name === value);
  if (!w) throw new Error(`BENCH_ENCODER_WINDOW must be one of ${ENCODER_WINDOWS.join(', ')}, not "${value}"`);
  return w;
}

export const BENCH_WINDOW: EncoderWindow = chosen(process.env.BENCH_ENCODER_WINDOW);
