// The host settings page. Everything the server returns is rendered as text
// (textContent, never innerHTML); the admin key lives in sessionStorage and
// goes out only as a bearer header to this server's /admin API.

const KEY_STORAGE = 'stt-admin-key';
const POLL_MS = 1000;

import type { AdminStatus, ApiKeyView, CreatedApiKey, List, ProviderView, RoutingView, RuntimeEntry } from '../src/admin-api';

/** A runtime row: the API's entry and, for the active one, the engine's state. */
type RuntimeRow = RuntimeEntry & { activeState: AdminStatus['local']['state'] | null };

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
  const res = await fetch(path, {
    method,
    headers: { Authorization: `Bearer ${adminKey() ?? ''}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
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

// ---- views

let providersCache: ProviderView[] = [];
let routingCache: RoutingView | null = null;

function renderStatus(s: AdminStatus): void {
  const rows: [string, string][] = [
    ['Mode', s.mode === 'cloud' ? 'Cloud' : 'Local'],
    ['Public model', s.publicModel],
    ['Active runtime', s.local.activeModel ? `${s.local.activeModel} (${s.local.state})` : s.local.state === 'error' ? `error: ${s.local.error}` : 'none'],
    ['Queue', `${s.queue.running} running, ${s.queue.waiting} waiting (capacity ${s.queue.capacity})`],
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
    el('option', { value: p.id, text: `${p.name}${p.enabled ? '' : ' (disabled)'}${p.apiKeySet ? '' : ' (no key)'}`, selected: p.id === chosen })));
  renderCloudModels();
}

function renderCloudModels(): void {
  const provider = providersCache.find((p) => p.id === $<HTMLSelectElement>('#cloud-provider').value);
  const modelSelect = $<HTMLSelectElement>('#cloud-model');
  const chosen = routingCache?.cloud && routingCache.cloud.providerId === provider?.id ? routingCache.cloud.model : modelSelect.value;
  modelSelect.replaceChildren(...(provider?.models ?? []).map((m) =>
    el('option', { value: m.id, text: m.alias ? `${m.id} (alias ${m.alias})` : m.id, selected: m.id === chosen })));
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

function renderKeys(keys: ApiKeyView[]): void {
  $('#key-table tbody').replaceChildren(...keys.map((k) => {
    const revoke = el('button', { type: 'button', className: 'danger', disabled: !!k.revokedAt, text: 'Revoke', 'aria-label': `Revoke ${k.name}` });
    revoke.addEventListener('click', () => {
      if (confirm(`Revoke the key "${k.name}"? Clients using it stop working at once.`)) {
        void act(`Key "${k.name}" revoked.`, () => api('POST', `/admin/api-keys/${encodeURIComponent(k.id)}/revoke`));
      }
    });
    return el('tr', { 'data-key': k.id },
      el('td', { text: k.name }), el('td', {}, el('code', { text: k.prefix })), el('td', { text: formatDate(k.createdAt) }),
      el('td', { text: formatDate(k.lastUsedAt) }), el('td', { text: k.revokedAt ? `revoked ${formatDate(k.revokedAt)}` : 'active' }), el('td', {}, revoke));
  }));
}

// ---- data flow

let pollTimer: number | undefined;

async function refresh(): Promise<void> {
  if (!adminKey()) return;
  try {
    const [status, routing, models, providers, keys] = await Promise.all([
      api<AdminStatus>('GET', '/admin/status'), api<RoutingView>('GET', '/admin/routing'), api<List<RuntimeEntry>>('GET', '/admin/local-models'),
      api<List<ProviderView>>('GET', '/admin/providers'), api<List<ApiKeyView>>('GET', '/admin/api-keys'),
    ]);
    renderStatus(status);
    const withState: RuntimeRow[] = models.data.map((m) => ({ ...m, activeState: m.active ? status.local.state : null }));
    renderRouting(routing, withState);
    renderProviders(providers.data);
    renderKeys(keys.data);
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
    const name = $<HTMLInputElement>('#key-name').value;
    void act(`Key "${name}" created.`, async () => {
      const created = await api<CreatedApiKey>('POST', '/admin/api-keys', { name });
      $('#new-key-value').textContent = created.key;
      $('#new-key').hidden = false;
      $<HTMLInputElement>('#key-name').value = '';
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
