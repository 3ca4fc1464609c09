// The settings page's "Try it" panel: a file, or a recording from the
// microphone, sent to POST /v1/audio/transcriptions with an API key exactly as
// a client sends it, the text drawn as the server streams it
// (stream=true), and the time it took. A recording goes as the browser's
// MediaRecorder made it (WebM/Opus in Chromium, Ogg/Opus in Firefox): the
// server decodes those itself. The API key stays in this page's memory only.

const $ = <T extends HTMLElement>(selector: string): T => document.querySelector<T>(selector)!;

/** What MediaRecorder is asked for, in order: the formats the server reads. */
const RECORDING_TYPES = ['audio/webm;codecs=opus', 'audio/ogg;codecs=opus', 'audio/webm'];

function say(message: string, isError = false): void {
  const state = $('#try-state');
  state.textContent = message;
  state.classList.toggle('error', isError);
}

interface StreamEvent {
  type: string;
  delta?: string;
  text?: string;
  error?: { message?: string };
}

/** Reads the server-sent events of a streamed transcription, drawing the text as it grows. */
async function readStream(res: Response, text: HTMLElement): Promise<void> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += value;
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
      if (!data || data === '[DONE]') continue;
      const event = JSON.parse(data) as StreamEvent;
      if (event.type === 'transcript.text.delta') text.textContent += event.delta ?? '';
      else if (event.type === 'transcript.text.done') text.textContent = event.text ?? '';
      else if (event.type === 'error') throw new Error(event.error?.message ?? 'the transcription failed');
    }
  }
}

async function transcribe(audio: Blob, filename: string, model: string, what: string): Promise<void> {
  const key = $<HTMLInputElement>('#try-key').value.trim();
  if (!key) return say('Enter an API key first.', true);
  const text = $('#try-text');
  text.textContent = '';
  say(`Transcribing ${what}…`);
  const form = new FormData();
  form.append('file', audio, filename);
  form.append('model', model);
  form.append('stream', 'true');
  const started = performance.now();
  try {
    const res = await fetch('/v1/audio/transcriptions', { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: form });
    if (!res.ok) {
      const body = await res.json().catch(() => null);
      return say(`HTTP ${res.status}: ${body?.error?.message ?? res.statusText}`, true);
    }
    await readStream(res, text);
    say(`Done in ${((performance.now() - started) / 1000).toFixed(1)} s (${what}).`);
  } catch (err) {
    say(`The transcription failed: ${(err as Error).message}`, true);
  }
}

/** `model`: the name clients send (the routing's public model). */
export function wireTryIt(model: () => string): void {
  const fileInput = $<HTMLInputElement>('#try-file');
  const record = $<HTMLButtonElement>('#try-record');
  const stop = $<HTMLButtonElement>('#try-stop');
  let recorder: MediaRecorder | null = null;

  $('#try-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const file = fileInput.files?.[0];
    if (!file) return say('Choose an audio file, or record one.', true);
    void transcribe(file, file.name, model(), file.name);
  });

  record.addEventListener('click', async () => {
    if (!navigator.mediaDevices?.getUserMedia) return say('This browser offers no microphone here (it needs localhost or HTTPS).', true);
    try {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      const mimeType = RECORDING_TYPES.find((t) => MediaRecorder.isTypeSupported(t));
      const rec = new MediaRecorder(stream, mimeType ? { mimeType } : {});
      const chunks: Blob[] = [];
      const started = performance.now();
      rec.ondataavailable = (e) => chunks.push(e.data);
      rec.onstop = () => {
        for (const track of stream.getTracks()) track.stop();
        const type = rec.mimeType || 'audio/webm';
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        void transcribe(new Blob(chunks, { type }), type.includes('ogg') ? 'recording.ogg' : 'recording.webm', model(), `a ${seconds}-s recording, ${type}`);
      };
      rec.start(1000);
      recorder = rec;
      record.disabled = true;
      stop.disabled = false;
      say('Recording… choose "Stop and transcribe" when done.');
    } catch (err) {
      say(`The microphone could not be opened: ${(err as Error).message}`, true);
    }
  });

  stop.addEventListener('click', () => {
    recorder?.stop();
    recorder = null;
    record.disabled = false;
    stop.disabled = true;
  });
}
