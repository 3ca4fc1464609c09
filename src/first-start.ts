// A new host's first start: make `npm start` plus one curl give a transcript.
// With no routing stored yet, STT_DEFAULT_MODEL (whisper-base unless "none")
// becomes the active runtime: at once when its file is installed, otherwise
// after a background download (progress in the log and /admin/status; a
// failure leaves the server up and says why there). With no API key yet, a
// first one is created and shown like the admin key. Anything a host set
// before (routing, keys) is never touched.
import path from 'node:path';
import type { Services } from './services';
import type { FirstStartView } from './admin-api';
import { installedFile, runtimeById } from './stt/catalogue';
import { writeSecretFile } from './store/secret-file';
import { followRouting } from './host/follow-routing';

export type FirstStartStatus = FirstStartView;

export interface FirstStart {
  /** What happened to the default model; null when routing was already stored or the default is "none". */
  status: FirstStartStatus | null;
  /** A first API key, created because none existed. */
  apiKey: { key: string; file: string } | null;
}

/** The parts of the running server a first start uses. */
export type FirstStartParts = Pick<Services, 'settings' | 'config' | 'firstStart' | 'stt' | 'local' | 'logger' | 'downloader' | 'db' | 'apiKeys'>;

export async function firstStart(s: FirstStartParts): Promise<FirstStart> {
  const result: FirstStart = { status: null, apiKey: null };
  const newHost = !(await s.settings.hasRouting());
  const spec = s.config.defaultModel ? runtimeById(s.config.defaultModel) : undefined;
  if (spec && newHost) {
    const status: FirstStartStatus = { model: spec.id, state: 'downloading', error: null };
    result.status = status;
    s.firstStart = status;
    const activate = async () => {
      // A download takes minutes: the host may have chosen routing meanwhile (admin API or CLI).
      if (await s.settings.hasRouting()) {
        status.state = 'failed';
        status.error = 'routing was set by the host during the download; left as set';
        return;
      }
      await s.settings.setRouting({ mode: 'local', localModel: spec.id, cloud: null });
      followRouting(s, await s.settings.routing(), { retryFailed: true });
      status.state = 'activated';
      s.logger.info({ runtime: spec.id }, 'first start: activated the default local runtime');
    };
    if (await installedFile(s.config.modelsDir, spec)) await activate();
    else {
      const file = spec.files[0];
      s.logger.info({ runtime: spec.id, file: file.name, from: s.config.modelBaseUrl }, 'first start: downloading the default local runtime in the background');
      void s.downloader.start(spec, file).then(async () => {
        const d = s.downloader.progress(spec.id);
        if (d?.state === 'done') await activate();
        else {
          status.state = 'failed';
          status.error = d?.error ?? 'download failed';
          s.logger.warn({ runtime: spec.id, err: status.error }, 'first start: the default local runtime could not be downloaded; install it from /settings or `npm run admin`');
        }
      });
    }
  }
  // Not with a shared database: replicas starting together would each make one (and keep it in their own data dir);
  // their host makes keys through the admin API or CLI.
  if (newHost && !s.db.shared && (await s.apiKeys.list()).length === 0) {
    const k = await s.apiKeys.create('first key');
    const file = path.join(s.config.dataDir, 'first-api.key');
    writeSecretFile(file, k.key);
    result.apiKey = { key: k.key, file };
  }
  return result;
}
