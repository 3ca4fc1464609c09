// The "Try it" panel's live mode: the microphone streamed to a realtime
// transcription session (GET /v1/realtime, WebSocket) as a browser client of
// OpenAI's API streams it: the API key in the `openai-insecure-api-key.`
// subprotocol, 24-kHz PCM16 in `input_audio_buffer.append` events, each
// turn's deltas drawn as they come and replaced by its `.completed`
// transcript. The server cuts turns where the speech stops when it has the
// VAD model (server_vad); otherwise "Stop" commits what was said as one turn.

const $ = <T extends HTMLElement>(selector: string): T => document.querySelector<T>(selector)!;

/** The rate the realtime API takes. */
const RATE = 24_000;
/** Samples per append: about 170 ms at 24 kHz. */
const BLOCK = 4096;

function say(message: string, isError = false): void {
  const state = $('#try-state');
  state.textContent = message;
  state.classList.toggle('error', isError);
}

/** Float samples to base64 little-endian PCM16. */
function pcm16Base64(samples: Float32Array): string {
  const bytes = new Uint8Array(samples.length * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < samples.length; i++) view.setInt16(2 * i, Math.max(-32768, Math.min(32767, Math.round(samples[i] * 32767))), true);
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

interface Live {
  stop(): void;
}

/** Opens a session and streams the microphone into it; resolves once it is listening. */
async function startLive(key: string, model: string, onEnd: () => void): Promise<Live> {
  const text = $('#try-text');
  text.textContent = '';
  const media = await navigator.mediaDevices.getUserMedia({ audio: true });
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const ws = new WebSocket(`${scheme}://${location.host}/v1/realtime?intent=transcription`, ['realtime', `openai-insecure-api-key.${key}`]);
  // Each turn's text by item id, in the order the turns were committed.
  const turns = new Map<string, string>();
  const draw = () => { text.textContent = [...turns.values()].filter(Boolean).join(' '); };
  let serverVad = false;
  let heard = false; // a turn is being heard (server_vad) or audio was appended since the last commit (no turn detection)
  let waiting = 0; // committed turns not yet answered
  let stopping = false;
  const started = performance.now();
  const finishIfDone = () => {
    if (stopping && waiting === 0 && !heard) ws.close();
  };
  ws.onmessage = (message) => {
    const event = JSON.parse(String(message.data)) as { type: string; item_id?: string; delta?: string; transcript?: string; session?: { audio?: { input?: { turn_detection?: unknown } } }; error?: { message?: string } };
    switch (event.type) {
      case 'session.created':
      case 'session.updated':
        serverVad = Boolean(event.session?.audio?.input?.turn_detection);
        break;
      case 'input_audio_buffer.speech_started':
        heard = true;
        turns.set(event.item_id!, '');
        if (!stopping) say('Hearing you…');
        break;
      case 'input_audio_buffer.committed':
        heard = false;
        waiting++;
        if (!turns.has(event.item_id!)) turns.set(event.item_id!, '');
        break;
      case 'conversation.item.input_audio_transcription.delta':
        turns.set(event.item_id!, (turns.get(event.item_id!) ?? '') + (event.delta ?? ''));
        draw();
        break;
      case 'conversation.item.input_audio_transcription.completed':
      case 'conversation.item.input_audio_transcription.failed':
        turns.set(event.item_id!, event.transcript ?? turns.get(event.item_id!) ?? '');
        waiting--;
        draw();
        if (event.type.endsWith('failed')) say(`A turn failed: ${event.error?.message ?? 'unknown error'}`, true);
        else if (!stopping) say('Listening… speak, pause, and the turn is transcribed; "Stop live" when done.');
        finishIfDone();
        break;
      case 'error':
        say(`The session says: ${event.error?.message ?? 'error'}`, true);
        // A refused last commit (too little audio) leaves nothing to wait for.
        if (stopping) ws.close();
        break;
    }
  };
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error('the realtime session could not be opened (is the key valid, and the server in Local mode?)'));
  });
  ws.send(JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: RATE }, transcription: { model } } } } }));
  // ScriptProcessorNode, deprecated but everywhere: an AudioWorklet would need a module file of its own for this one panel.
  const context = new AudioContext({ sampleRate: RATE });
  const source = context.createMediaStreamSource(media);
  const processor = context.createScriptProcessor(BLOCK, 1, 1);
  processor.onaudioprocess = (e) => {
    if (stopping || ws.readyState !== WebSocket.OPEN) return;
    ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: pcm16Base64(e.inputBuffer.getChannelData(0)) }));
    if (!serverVad) heard = true;
  };
  source.connect(processor);
  processor.connect(context.destination);
  ws.onclose = () => {
    for (const track of media.getTracks()) track.stop();
    void context.close();
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (!$('#try-state').classList.contains('error')) say(`Done: a ${seconds}-s live session, ${turns.size} turn(s).`);
    onEnd();
  };
  say(serverVad ? 'Listening… speak, pause, and the turn is transcribed; "Stop live" when done.' : 'Listening… "Stop live" transcribes what you said.');
  return {
    stop: () => {
      stopping = true;
      for (const track of media.getTracks()) track.stop();
      say('Finishing the last turn…');
      // The turn being heard, or what was said with no turn detection, is committed; the session closes once every turn is answered.
      if (heard && ws.readyState === WebSocket.OPEN) {
        ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
      }
      finishIfDone();
    },
  };
}

/** `model`: the name clients send (the routing's public model). */
export function wireTryLive(model: () => string): void {
  const button = $<HTMLButtonElement>('#try-live');
  let live: Live | null = null;
  button.addEventListener('click', async () => {
    if (live) {
      live.stop();
      live = null;
      button.disabled = true;
      return;
    }
    const key = $<HTMLInputElement>('#try-key').value.trim();
    if (!key) return say('Enter an API key first.', true);
    if (!navigator.mediaDevices?.getUserMedia) return say('This browser offers no microphone here (it needs localhost or HTTPS).', true);
    button.disabled = true;
    try {
      live = await startLive(key, model(), () => {
        live = null;
        button.textContent = 'Live';
        button.disabled = false;
      });
      button.textContent = 'Stop live';
      button.disabled = false;
    } catch (err) {
      say(`The live session could not start: ${(err as Error).message}`, true);
      button.disabled = false;
    }
  });
}
