// The `info` answer to `describe`: one ASR program, this server, with the
// active local runtime as its one model and the languages that runtime
// accepts (Home Assistant lists them in its pipeline settings). Transcripts
// come whole at `audio-stop` (no transcript streaming), and the client's own
// VAD ends the utterance (requires_external_vad), as Home Assistant's
// pipeline does.
import type { Backends } from '../stt/backends';
import { WHISPER_LANGUAGES } from '../stt/languages';
import { VERSION } from '../services';

/** Who made what: the program runs whisper.cpp; each model family has its makers. */
const PROGRAM_ATTRIBUTION = { name: 'whisper.cpp', url: 'https://github.com/ggml-org/whisper.cpp' };
const MODEL_ATTRIBUTION = {
  whisper: { name: 'OpenAI', url: 'https://github.com/openai/whisper' },
  parakeet: { name: 'NVIDIA', url: 'https://huggingface.co/nvidia/parakeet-tdt-0.6b-v3' },
};

export async function infoEvent(stt: Backends): Promise<Record<string, unknown>> {
  const spec = stt.local.activeRuntime();
  const languages = spec ? [...spec.languages] : Object.keys(WHISPER_LANGUAGES);
  const model = {
    name: spec?.id ?? 'none',
    attribution: spec ? MODEL_ATTRIBUTION[spec.family] : PROGRAM_ATTRIBUTION,
    // Installed even while it loads: Home Assistant drops the languages of a model that is not.
    installed: spec !== null,
    description: spec ? `${spec.id} on this server's local runtime` : 'no local runtime is active',
    version: null,
    languages,
  };
  return {
    asr: [{
      name: 'stt-gateway',
      attribution: PROGRAM_ATTRIBUTION,
      installed: true,
      description: 'stt-gateway: speech to text on this machine',
      version: VERSION,
      models: [model],
      supports_transcript_streaming: false,
      requires_external_vad: true,
    }],
    tts: [], handle: [], intent: [], wake: [], mic: [], snd: [],
  };
}
