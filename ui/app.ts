// The host settings page. Everything the server returns is rendered as text
// (textContent, never innerHTML); the admin key lives in sessionStorage and
// goes out only as a bearer header to this server's /admin API.

const KEY_STORAGE = 'stt-admin-key';
const POLL_MS = 1000;

import { wireTryIt } from './try-it.js';
import { wireTryLive } from './try-live.js';
import type { AdminStatus, ApiKeyView, CreatedApiKey, JobSummary, KeyLimits, KeyUsage, List, ProviderView, RoutingView, RuntimeEntry, SpillOver, ReadyView } from '../src/admin-api';

/** A runtime row: the API's entry and, for the active one, the engine's state. */
type RuntimeRow = RuntimeEntry & { activeState: AdminStatus['local']['state'] | null };

/** GET /ready's 200 answer (a public route, not an /admin one). */
/** GET /ready: its answer, or the 503's reason. */
type Readiness = ReadyView | { ready: false; message: string };

class ApiFailure extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

const $ = <T extends HTMLElement>(selector: string): T => {
  const node = document.querySelector<T>(selector);
  if (!node) throw new Error(`missing ${selector}`);
  return node;
};

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, string | boolean | number>> = {},
  ...children: (Node | string | null)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === false) continue;
    if (k === 'text') node.textContent = String(v);
    else if (k === 'className') node.className = String(v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null) node.append(c);
  return node;
}

function adminKey(): string | null {
  return sessionStorage.getItem(KEY_STORAGE);
}

async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  return answerOf<T>(await fetch(path, {
    method,
    headers: { Authorization: `Bearer ${adminKey() ?? ''}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  }));
}

/** GET /ready: public, so asked without the admin key; a 503 says why the route cannot serve. */
async function readiness(): Promise<Readiness> {
  try {
    return await answerOf<ReadyView>(await fetch('/ready'));
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 503) return { ready: false, message: err.message };
    throw err;
  }
}

/** A response's JSON; an ApiFailure with the error envelope's message when it is not a success. */
async function answerOf<T>(res: Response): Promise<T> {
  const text = await res.text();
  let data: { error?: { message?: string } } | null = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: fall through with the status
  }
  if (!res.ok) throw new ApiFailure(res.status, data?.error?.message ?? `The server answered HTTP ${res.status}.`);
  return data as T;
}

function notify(message: string, isError = false): void {
  const n = $('#notice');
  n.textContent = message;
  n.className = isError ? 'error' : '';
  n.setAttribute('role', isError ? 'alert' : 'status');
  n.hidden = false;
}

/** Runs an action, reports its outcome, refreshes the view. */
async function act(success: string, action: () => Promise<unknown>): Promise<void> {
  try {
    await action();
    notify(success);
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) return signOut('The admin key is no longer accepted.');
    notify((err as Error).message, true);
  }
  await refresh();
}

const formatBytes = (n: number | null) => (n === null ? '—' : n >= 1e9 ? `${(n / 1e9).toFixed(2)} GB` : `${(n / 1e6).toFixed(1)} MB`);
const formatDate = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');
function formatUptime(s: number): string {
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return h ? `${h} h ${m} min` : m ? `${m} min ${s % 60} s` : `${s} s`;
}
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
function formatLimits(k: KeyLimits): string {
  const parts = [
    k.requestsPerMinute === null ? null : `${k.requestsPerMinute}/min`,
    k.audioSecondsPerDay === null ? null : `${k.audioSecondsPerDay} s/day`,
    k.localOnly ? 'local only' : null,
  ].filter((p): p is string => p !== null);
  return parts.length ? parts.join(', ') : 'none';
}
const formatUsage = (u: KeyUsage | undefined) =>
  (u ? `${plural(u.requests, 'request')}, ${Math.round(u.audioSeconds * 10) / 10} s of audio, ${plural(u.errors, 'error')}` : '—');
function formatSpillover(s: SpillOver | null): string {
  if (!s) return 'off: requests the local runtime cannot take are refused (503).';
  const when = s.maxWaitSeconds === null ? 'when the local queue is full or the model is loading'
    : `when the local queue is full, the model is loading or the predicted wait is over ${s.maxWaitSeconds} s`;
  return `to ${s.providerId}/${s.model}, ${when}.`;
}
/** A number input's value as a limit: empty is none. */
const limitValue = (v: FormDataEntryValue | null): number | null => (v === null || String(v).trim() === '' ? null : Number(v));
const providerLabel = (p: ProviderView) => `${p.name}${p.enabled ? '' : ' (disabled)'}${p.apiKeySet ? '' : ' (no key)'}`;

/** A form the host has started on (focus inside, or changed and not saved): the poll leaves its fields alone. */
function editing(form: HTMLElement | null): boolean {
  return !!form && (form.contains(document.activeElement) || form.dataset.dirty === '1');
}
function trackEdits(form: HTMLElement): void {
  for (const type of ['input', 'change']) form.addEventListener(type, () => (form.dataset.dirty = '1'));
}
/** After a save: the form shows the stored values again from the next refresh on. */
function settle(form: HTMLElement): void {
  delete form.dataset.dirty;
  if (form.contains(document.activeElement)) (document.activeElement as HTMLElement).blur();
}

// ---- views

let providersCache: ProviderView[] = [];
let routingCache: RoutingView | null = null;

function renderStatus(s: AdminStatus, ready: Readiness): void {
  const rows: [string, string][] = [
    ['Mode', s.mode === 'cloud' ? 'Cloud' : 'Local'],
    ['Ready', ready.ready ? `ready (${ready.runtime})` : `not ready: ${ready.message}`],
    ['Public model', s.publicModel],
    ['Active runtime', s.local.activeModel ? `${s.local.activeModel} (${s.local.state})` : s.local.state === 'error' ? `error: ${s.local.error}` : 'none'],
    ['Queue', `${s.queue.running} running, ${s.queue.waiting} waiting (capacity ${s.queue.capacity})`],
    ['Jobs', `${s.jobs.queued} queued, ${s.jobs.running} running${s.jobs.oldestQueuedSeconds === null ? '' : ` (the oldest waiting ${formatUptime(s.jobs.oldestQueuedSeconds)})`}`],
    ['Version', s.version],
    ['Uptime', formatUptime(s.uptimeSeconds)],
  ];
  for (const p of s.providers) if (p.lastError) rows.push([`Provider ${p.id}`, `last call failed: ${p.lastError.message}`]);
  $('#status-list').replaceChildren(...rows.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v, 'data-field': k })]));
}

// True between choosing "Cloud provider" and submitting a target: the poll
// must not flip the page back to Local while the host is still picking.
let choosingCloud = false;

function renderRouting(routing: RoutingView, models: RuntimeRow[]): void {
  routingCache = routing;
  const shown = choosingCloud ? 'cloud' : routing.mode;
  for (const r of document.querySelectorAll<HTMLInputElement>('input[name=mode]')) r.checked = r.value === shown;
  $('#public-model').textContent = routing.publicModel;
  // Not while the host is typing a new list.
  const aliases = $<HTMLInputElement>('#aliases');
  if (document.activeElement !== aliases) aliases.value = routing.aliases.join(' ');
  $('#local-panel').hidden = shown !== 'local';
  $('#cloud-panel').hidden = shown !== 'cloud';
  const rows = models.map((m) => {
    const d = m.download;
    const downloading = d && (d.state === 'downloading' || d.state === 'verifying');
    const progress = d
      ? el('div', {},
          el('progress', { max: d.totalBytes ?? 1, value: d.totalBytes ? d.receivedBytes : d.state === 'done' ? 1 : 0, 'aria-label': `Download of ${m.id}` }),
          el('span', { className: 'hint', text: ` ${d.state}${d.error ? `: ${d.error}` : ''}` }))
      : el('span', { text: '—' });
    const state = m.active ? (m.activeState ?? 'active') : m.installed ? 'installed' : 'not installed';
    const download = el('button', { type: 'button', className: 'secondary', disabled: !!downloading, text: m.installed ? 'Download again' : 'Download' });
    download.addEventListener('click', () => act(`Download of ${m.id} started.`, () => api('POST', `/admin/local-models/${m.id}/download`, {})));
    const activate = el('button', { type: 'button', disabled: !m.installed || m.active, text: 'Activate' });
    activate.addEventListener('click', () => act(`${m.id} is being activated.`, () => api('PUT', '/admin/routing', { mode: 'local', localModel: m.id })));
    const remove = el('button', { type: 'button', className: 'danger', disabled: !m.installed || m.active || !!downloading, text: 'Delete' });
    remove.addEventListener('click', () => {
      if (confirm(`Delete the files of ${m.id}?`)) void act(`${m.id} deleted.`, () => api('DELETE', `/admin/local-models/${m.id}`));
    });
    return el('tr', { 'data-runtime': m.id },
      el('td', {}, el('strong', { text: m.id }), el('div', { className: 'hint', text: m.family === 'whisper' ? 'Whisper' : 'Parakeet TDT' })),
      el('td', { text: state, 'data-field': 'state' }),
      el('td', { text: formatBytes(m.bytes) }),
      el('td', {}, progress),
      el('td', {}, download, ' ', activate, ' ', remove));
  });
  $('#runtimes tbody').replaceChildren(...rows);
}

function renderCloudForm(): void {
  const providerSelect = $<HTMLSelectElement>('#cloud-provider');
  const chosen = providerSelect.value || routingCache?.cloud?.providerId || '';
  providerSelect.replaceChildren(...providersCache.map((p) =>
    el('option', { value: p.id, text: providerLabel(p), selected: p.id === chosen })));
  renderCloudModels();
}

function renderCloudModels(): void {
  const provider = providersCache.find((p) => p.id === $<HTMLSelectElement>('#cloud-provider').value);
  const modelSelect = $<HTMLSelectElement>('#cloud-model');
  const chosen = routingCache?.cloud && routingCache.cloud.providerId === provider?.id ? routingCache.cloud.model : modelSelect.value;
  modelSelect.replaceChildren(...(provider?.models ?? []).map((m) =>
    el('option', { value: m.id, text: m.alias ? `${m.id} (alias ${m.alias})` : m.id, selected: m.id === chosen })));
}

function renderSpillover(): void {
  const spillover = routingCache?.spillover ?? null;
  $('#spillover-current').textContent = `Spill-over: ${formatSpillover(spillover)}`;
  if (editing($('#spillover-form'))) return;
  const providerSelect = $<HTMLSelectElement>('#spillover-provider');
  const chosen = spillover?.providerId ?? providerSelect.value;
  providerSelect.replaceChildren(...providersCache.map((p) => el('option', { value: p.id, text: providerLabel(p), selected: p.id === chosen })));
  renderSpilloverModels(spillover && spillover.providerId === providerSelect.value ? spillover.model : null);
  const wait = spillover?.maxWaitSeconds ?? null;
  $<HTMLInputElement>('#spillover-wait').value = wait === null ? '' : String(wait);
}

function renderSpilloverModels(chosen: string | null): void {
  const provider = providersCache.find((p) => p.id === $<HTMLSelectElement>('#spillover-provider').value);
  const modelSelect = $<HTMLSelectElement>('#spillover-model');
  const keep = chosen ?? modelSelect.value;
  modelSelect.replaceChildren(...(provider?.models ?? []).map((m) =>
    el('option', { value: m.id, text: m.alias ? `${m.id} (alias ${m.alias})` : m.id, selected: m.id === keep })));
}

function providerCard(p: ProviderView): HTMLElement {
  const id = (suffix: string) => `provider-${p.id}-${suffix}`;
  const modelsText = p.models.map((m) => (m.alias ? `${m.id}=${m.alias}` : m.id)).join('\n');
  const form = el('form', { className: 'provider', 'data-provider': p.id },
    el('h3', { text: `${p.name} (${p.id}, ${p.kind === 'deepgram' ? 'Deepgram' : 'OpenAI-compatible'})` }),
    el('label', { for: id('name'), text: 'Name' }), el('input', { id: id('name'), name: 'name', value: p.name }),
    el('label', { for: id('url'), text: 'Base URL' }), el('input', { id: id('url'), name: 'baseUrl', type: 'url', value: p.baseUrl }),
    el('label', { className: 'inline' }, el('input', { type: 'checkbox', name: 'enabled', checked: p.enabled }), 'Enabled'),
    el('label', { for: id('key'), text: `API key (${p.apiKeySet ? `set, ${p.apiKeyHint}` : 'not set'})` }),
    el('input', { id: id('key'), name: 'apiKey', type: 'password', autocomplete: 'off', placeholder: p.apiKeySet ? 'leave empty to keep the current key' : 'paste the key' }),
    el('label', { for: id('models'), text: 'Models (one per line, "id" or "id=alias")' }),
    el('textarea', { id: id('models'), name: 'models', rows: 3, text: modelsText }),
    el('button', { type: 'submit', text: `Save ${p.name}` }));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const models = String(data.get('models') ?? '').split('\n').map((l) => l.trim()).filter(Boolean).map((l) => {
      const [mid, alias] = l.split('=').map((x) => x.trim());
      return alias ? { id: mid, alias } : { id: mid };
    });
    const body: { name: FormDataEntryValue | null; baseUrl: FormDataEntryValue | null; enabled: boolean; models: { id: string; alias?: string }[]; apiKey?: string } = { name: data.get('name'), baseUrl: data.get('baseUrl'), enabled: data.get('enabled') === 'on', models };
    const key = String(data.get('apiKey') ?? '');
    if (key) body.apiKey = key;
    void act(`${p.name} saved.`, () => api('PUT', `/admin/providers/${encodeURIComponent(p.id)}`, body));
  });
  return form;
}

function renderProviders(providers: ProviderView[]): void {
  // Do not replace a form the host is typing into.
  const focused = document.activeElement;
  const editing = focused?.closest('#provider-list') && ['INPUT', 'TEXTAREA', 'SELECT'].includes(focused.tagName);
  providersCache = providers;
  if (!editing) $('#provider-list').replaceChildren(...providers.map(providerCard));
  if (!(focused?.closest('#cloud-form') && focused.tagName === 'SELECT')) renderCloudForm();
}

function limitsEditor(k: ApiKeyView, open: boolean): HTMLDetailsElement {
  const form = el('form', { className: 'key-limits' },
    el('label', { title: 'Audio requests per minute; empty: no limit' }, 'Requests/min',
      el('input', { type: 'number', name: 'requestsPerMinute', min: 1, max: 1_000_000, step: 1, value: k.requestsPerMinute ?? '', placeholder: 'no limit' })),
    el('label', { title: 'Seconds of audio per UTC day; empty: no limit' }, 'Audio s/day',
      el('input', { type: 'number', name: 'audioSecondsPerDay', min: 1, max: 1_000_000_000, step: 1, value: k.audioSecondsPerDay ?? '', placeholder: 'no limit' })),
    el('label', { className: 'check' }, el('input', { type: 'checkbox', name: 'localOnly', checked: k.localOnly }), 'Local only'),
    el('button', { type: 'submit', text: 'Save limits' }));
  trackEdits(form);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const limits: KeyLimits = {
      requestsPerMinute: limitValue(data.get('requestsPerMinute')),
      audioSecondsPerDay: limitValue(data.get('audioSecondsPerDay')),
      localOnly: data.get('localOnly') === 'on',
    };
    void act(`Limits of "${k.name}": ${formatLimits(limits)}.`, async () => {
      await api<ApiKeyView>('PATCH', `/admin/api-keys/${encodeURIComponent(k.id)}`, limits);
      settle(form);
    });
  });
  return el('details', { open }, el('summary', { text: 'Edit limits', 'aria-label': `Edit limits of ${k.name}` }), form);
}

function keyRow(k: ApiKeyView, editorOpen: boolean): HTMLTableRowElement {
  const revoke = el('button', { type: 'button', className: 'danger', disabled: !!k.revokedAt, text: 'Revoke', 'aria-label': `Revoke ${k.name}` });
  revoke.addEventListener('click', () => {
    if (confirm(`Revoke the key "${k.name}"? Clients using it stop working at once.`)) {
      void act(`Key "${k.name}" revoked.`, () => api('POST', `/admin/api-keys/${encodeURIComponent(k.id)}/revoke`));
    }
  });
  return el('tr', { 'data-key-id': k.id },
    el('td', { text: k.name }), el('td', {}, el('code', { text: k.prefix })), el('td', { text: formatDate(k.createdAt) }),
    el('td', { text: formatDate(k.lastUsedAt) }), el('td', { text: k.revokedAt ? `revoked ${formatDate(k.revokedAt)}` : 'active' }),
    el('td', { text: formatLimits(k), 'data-field': 'limits' }), el('td', { text: formatUsage(k.usage), 'data-field': 'usage' }),
    el('td', { 'data-cell': 'actions' }, revoke, k.revokedAt ? null : limitsEditor(k, editorOpen)));
}

function renderKeys(keys: ApiKeyView[]): void {
  const tbody = $('#key-table tbody');
  const shown = [...tbody.querySelectorAll<HTMLTableRowElement>('tr[data-key-id]')];
  const fresh = keys.map((k) => keyRow(k, !!shown.find((r) => r.dataset.keyId === k.id)?.querySelector('details')?.open));
  if (shown.length !== keys.length || shown.some((r, i) => r.dataset.keyId !== keys[i].id)) {
    tbody.replaceChildren(...fresh);
    return;
  }
  // The same keys: row by row, and cell by cell where a limits form is being
  // filled in, so that form keeps its values and its focus.
  for (const [i, row] of shown.entries()) {
    if (keys[i].revokedAt || !editing(row.querySelector<HTMLElement>('form.key-limits'))) {
      row.replaceWith(fresh[i]);
      continue;
    }
    const cells = [...fresh[i].cells];
    for (const [j, cell] of [...row.cells].entries()) if (cell.dataset.cell !== 'actions') cell.replaceWith(cells[j]);
  }
}

function jobRow(j: JobSummary): HTMLTableRowElement {
  const open = j.status === 'queued' || j.status === 'running';
  const cancel = el('button', { type: 'button', className: 'danger', text: 'Cancel', 'aria-label': `Cancel ${j.id}` });
  cancel.addEventListener('click', () => {
    if (confirm(`Cancel the job ${j.id}? Its recording is removed.`)) void act(`Job ${j.id} cancelled.`, () => api('DELETE', `/admin/jobs/${encodeURIComponent(j.id)}`));
  });
  const progress = `${Math.round(j.secondsDone)} of ${Math.round(j.secondsTotal)} s`;
  return el('tr', { 'data-job-id': j.id },
    el('td', {}, el('code', { text: j.id })), el('td', {}, el('code', { text: j.keyId })), el('td', { text: formatDate(j.createdAt) }),
    el('td', { text: j.status === 'failed' && j.errorCode ? `failed (${j.errorCode})` : j.status, 'data-field': 'state' }),
    el('td', { text: progress, 'data-field': 'progress' }), el('td', { text: j.callbackStatus ?? '—' }),
    el('td', {}, open ? cancel : null));
}

function renderJobs(jobs: JobSummary[]): void {
  $('#jobs-empty').hidden = jobs.length > 0;
  $('#job-table').hidden = jobs.length === 0;
  $('#job-table tbody').replaceChildren(...jobs.map(jobRow));
}

// ---- data flow

let pollTimer: number | undefined;

async function refresh(): Promise<void> {
  if (!adminKey()) return;
  try {
    const [status, ready, routing, models, providers, keys, jobs] = await Promise.all([
      api<AdminStatus>('GET', '/admin/status'), readiness(), api<RoutingView>('GET', '/admin/routing'), api<List<RuntimeEntry>>('GET', '/admin/local-models'),
      api<List<ProviderView>>('GET', '/admin/providers'), api<List<ApiKeyView>>('GET', '/admin/api-keys'), api<List<JobSummary>>('GET', '/admin/jobs'),
    ]);
    renderStatus(status, ready);
    const withState: RuntimeRow[] = models.data.map((m) => ({ ...m, activeState: m.active ? status.local.state : null }));
    renderRouting(routing, withState);
    renderProviders(providers.data);
    renderSpillover();
    renderKeys(keys.data);
    renderJobs(jobs.data);
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) return signOut('The admin key is no longer accepted.');
    notify(`Could not load the settings: ${(err as Error).message}`, true);
  }
}

function signedIn(): void {
  $('#login').hidden = true;
  $('#app').hidden = false;
  $('#sign-out').hidden = false;
  void refresh();
  window.clearInterval(pollTimer);
  pollTimer = window.setInterval(() => void refresh(), POLL_MS);
}

function signOut(message?: string): void {
  sessionStorage.removeItem(KEY_STORAGE);
  window.clearInterval(pollTimer);
  choosingCloud = false;
  $('#app').hidden = true;
  $('#sign-out').hidden = true;
  $('#login').hidden = false;
  if (message) notify(message, true);
  else $('#notice').hidden = true;
}

function wire(): void {
  $('#login-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const key = $<HTMLInputElement>('#admin-key').value.trim();
    sessionStorage.setItem(KEY_STORAGE, key);
    try {
      await api('GET', '/admin/status');
      $<HTMLInputElement>('#admin-key').value = '';
      $('#notice').hidden = true;
      signedIn();
    } catch (err) {
      sessionStorage.removeItem(KEY_STORAGE);
      notify(err instanceof ApiFailure && err.status === 401 ? 'That admin key was not accepted.' : (err as Error).message, true);
    }
  });
  $('#sign-out').addEventListener('click', () => signOut());

  for (const radio of document.querySelectorAll<HTMLInputElement>('input[name=mode]')) {
    radio.addEventListener('change', () => {
      choosingCloud = radio.value === 'cloud' && routingCache?.mode !== 'cloud';
      if (radio.value === 'local') void act('Switched to Local mode.', () => api('PUT', '/admin/routing', { mode: 'local' }));
      else {
        // Cloud needs a target: show the form and let the host pick one.
        $('#local-panel').hidden = true;
        $('#cloud-panel').hidden = false;
        notify('Pick a provider and model, then choose "Use this cloud model".');
      }
    });
  }
  $('#cloud-provider').addEventListener('change', renderCloudModels);
  $('#cloud-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const providerId = $<HTMLSelectElement>('#cloud-provider').value;
    const model = $<HTMLSelectElement>('#cloud-model').value;
    void act(`Now routing to ${providerId}/${model}.`, async () => {
      await api('PUT', '/admin/routing', { mode: 'cloud', cloud: { providerId, model } });
      choosingCloud = false;
    });
  });

  $('#aliases-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const aliases = $<HTMLInputElement>('#aliases').value.split(/[\s,]+/).filter(Boolean);
    void act(aliases.length ? `Also accepting ${aliases.join(', ')}.` : 'No extra model names.', async () => {
      await api('PUT', '/admin/routing', { aliases });
      $<HTMLInputElement>('#aliases').blur();
    });
  });

  const spilloverForm = $<HTMLFormElement>('#spillover-form');
  trackEdits(spilloverForm);
  $('#spillover-provider').addEventListener('change', () => renderSpilloverModels(null));
  spilloverForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const wait = $<HTMLInputElement>('#spillover-wait').value.trim();
    const spillover: SpillOver = {
      providerId: $<HTMLSelectElement>('#spillover-provider').value,
      model: $<HTMLSelectElement>('#spillover-model').value,
      maxWaitSeconds: wait === '' ? null : Number(wait),
    };
    void act(`Spill-over ${formatSpillover(spillover)}`, async () => {
      await api('PUT', '/admin/routing', { spillover });
      settle(spilloverForm);
    });
  });
  $('#spillover-off').addEventListener('click', () => void act('Spill-over turned off.', async () => {
    await api('PUT', '/admin/routing', { spillover: null });
    settle(spilloverForm);
  }));

  $('#provider-add').addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(event.target as HTMLFormElement);
    const id = String(data.get('id'));
    void act(`Provider ${id} added.`, async () => {
      await api('PUT', `/admin/providers/${encodeURIComponent(id)}`, { kind: data.get('kind'), baseUrl: data.get('baseUrl') });
      (event.target as HTMLFormElement).reset();
    });
  });

  $('#key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const data = new FormData(form);
    const name = String(data.get('name') ?? '');
    // Limits left empty are not sent: the key has none.
    const body: { name: string } & Partial<KeyLimits> = { name };
    const requestsPerMinute = limitValue(data.get('requestsPerMinute'));
    const audioSecondsPerDay = limitValue(data.get('audioSecondsPerDay'));
    if (requestsPerMinute !== null) body.requestsPerMinute = requestsPerMinute;
    if (audioSecondsPerDay !== null) body.audioSecondsPerDay = audioSecondsPerDay;
    if (data.get('localOnly') === 'on') body.localOnly = true;
    void act(`Key "${name}" created.`, async () => {
      const created = await api<CreatedApiKey>('POST', '/admin/api-keys', body);
      $('#new-key-value').textContent = created.key;
      $('#new-key').hidden = false;
      form.reset();
    });
  });
  $('#copy-key').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText($('#new-key-value').textContent ?? '');
      notify('Key copied to the clipboard.');
    } catch {
      notify('Copying failed: select the key and copy it by hand.', true);
    }
  });

  if (adminKey()) signedIn();
}

wire();
wireTryIt(() => $('#public-model').textContent ?? '');
wireTryLive(() => $('#public-model').textContent ?? '');
