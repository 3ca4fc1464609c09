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
/** Samples per audio callback, at the microphone's own rate. */
const BLOCK = 4096;
/** With no turn detection, what was said is committed every this many seconds (the server holds at most 120 s uncommitted). */
const COMMIT_EVERY_SECONDS = 20;
/** After "Stop live", how long the last turns may take before the session is closed anyway. */
const STOP_TIMEOUT_MS = 60_000;

function say(message: string, isError = false): void {
  const state = $('#try-state');
  state.textContent = message;
  state.classList.toggle('error', isError);
}

/** Float samples at `from` Hz to 24-kHz base64 little-endian PCM16 (linear interpolation; `carry` holds the last sample between blocks). */
function pcm16Base64(samples: Float32Array, from: number, carry: { last: number; phase: number }): string {
  const step = from / RATE;
  const out: number[] = [];
  // Positions run over [previous block's last sample, this block], so blocks join without a seam.
  for (let x = carry.phase; x < samples.length; x += step) {
    const j = Math.floor(x);
    const a = j === 0 ? carry.last : samples[j - 1];
    const b = samples[j];
    out.push(a + (b - a) * (x - j));
  }
  carry.phase = (carry.phase + out.length * step) - samples.length;
  carry.last = samples[samples.length - 1] ?? carry.last;
  const bytes = new Uint8Array(out.length * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < out.length; i++) view.setInt16(2 * i, Math.max(-32768, Math.min(32767, Math.round(out[i] * 32767))), true);
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

interface Live {
  stop(): void;
}

/** Opens a session and streams the microphone into it; resolves once it is listening. Nothing is left open when it fails. */
async function startLive(key: string, model: string, onEnd: () => void): Promise<Live> {
  const text = $('#try-text');
  text.textContent = '';
  const media = await navigator.mediaDevices.getUserMedia({ audio: true });
  let ws: WebSocket | null = null;
  // The microphone's own rate: browsers (Firefox) refuse to connect a stream to a context at another rate; the page resamples.
  let context: AudioContext | null = null;
  const release = () => {
    for (const track of media.getTracks()) track.stop();
    void context?.close().catch(() => undefined);
  };
  try {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const socket = new WebSocket(`${scheme}://${location.host}/v1/realtime?intent=transcription`, ['realtime', `openai-insecure-api-key.${key}`]);
    ws = socket;
    // Each turn's text by item id, in the order the turns were committed.
    const turns = new Map<string, string>();
    const draw = () => { text.textContent = [...turns.values()].filter(Boolean).join(' '); };
    let serverVad = false;
    let heard = false; // a turn is being heard (server_vad) or audio was appended since the last commit (no turn detection)
    let uncommitted = 0; // seconds appended since the last commit, with no turn detection
    let waiting = 0; // committed turns not yet answered
    let stopping = false;
    let failed = false;
    const started = performance.now();
    const listening = () => say(serverVad ? 'Listening… speak, pause, and the turn is transcribed; "Stop live" when done.' : 'Listening… what you say is transcribed at "Stop live" (and every 20 s).');
    const finishIfDone = () => {
      if (stopping && waiting === 0 && !heard) socket.close(1000);
    };
    const commit = () => {
      socket.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
      uncommitted = 0;
    };
    socket.onmessage = (message) => {
      const event = JSON.parse(String(message.data)) as { type: string; item_id?: string; delta?: string; transcript?: string; session?: { audio?: { input?: { turn_detection?: unknown } } }; error?: { message?: string; code?: string } };
      switch (event.type) {
        case 'session.created':
        case 'session.updated':
          serverVad = Boolean(event.session?.audio?.input?.turn_detection);
          if (!stopping) listening();
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
          turns.set(event.item_id!, event.transcript ?? '');
          waiting--;
          draw();
          if (!stopping) listening();
          finishIfDone();
          break;
        case 'conversation.item.input_audio_transcription.failed':
          // What its drafts showed is not its text.
          turns.set(event.item_id!, '');
          waiting--;
          draw();
          failed = true;
          say(`A turn failed: ${event.error?.message ?? 'unknown error'}`, true);
          finishIfDone();
          break;
        case 'error':
          // A last commit refused (the turn had already been committed, or too little audio) leaves nothing to wait for.
          if (stopping && event.error?.code === 'input_audio_buffer_commit_empty') {
            heard = false;
            finishIfDone();
            break;
          }
          failed = true;
          say(`The session says: ${event.error?.message ?? 'error'}`, true);
          if (stopping) socket.close(1000);
          break;
      }
    };
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve();
      socket.onerror = () => reject(new Error('the realtime session could not be opened (is the key valid, and the server in Local mode?)'));
    });
    socket.send(JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: RATE }, transcription: { model } } } } }));
    context = new AudioContext();
    const micRate = context.sampleRate;
    const source = context.createMediaStreamSource(media);
    // ScriptProcessorNode, deprecated but everywhere: an AudioWorklet would need a module file of its own for this one panel.
    const processor = context.createScriptProcessor(BLOCK, 1, 1);
    const carry = { last: 0, phase: 0 };
    processor.onaudioprocess = (e) => {
      if (stopping || socket.readyState !== WebSocket.OPEN) return;
      const samples = e.inputBuffer.getChannelData(0);
      socket.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: pcm16Base64(samples, micRate, carry) }));
      if (serverVad) return;
      heard = true;
      uncommitted += samples.length / micRate;
      if (uncommitted >= COMMIT_EVERY_SECONDS) commit();
    };
    source.connect(processor);
    processor.connect(context.destination);
    socket.onclose = (event) => {
      release();
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      if (event.code !== 1000 && event.code !== 1005 && !failed) say(`The session was closed (${event.code}${event.reason ? `: ${event.reason}` : ''}).`, true);
      else if (!failed) say(`Done: a ${seconds}-s live session, ${turns.size} turn(s).`);
      onEnd();
    };
    listening();
    return {
      stop: () => {
        stopping = true;
        for (const track of media.getTracks()) track.stop();
        say('Finishing the last turn…');
        // The turn being heard, or what was said with no turn detection, is committed; the session closes once every turn is answered.
        if (heard && socket.readyState === WebSocket.OPEN) commit();
        finishIfDone();
        setTimeout(() => socket.close(1000), STOP_TIMEOUT_MS);
      },
    };
  } catch (err) {
    release();
    ws?.close();
    throw err;
  }
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
