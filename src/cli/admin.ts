// Headless host administration against the data directory:
//   npm run admin -- keys create <name> | keys list | keys revoke <id>
//   npm run admin -- keys limits <id> [--rpm N|none] [--audio-per-day S|none] [--local-only yes|no]
//   npm run admin -- runtime list | runtime activate <id> | runtime deactivate
//   npm run admin -- aliases set [<name>...]
//   npm run admin -- jobs list | jobs cancel <id>
//   npm run admin -- status
// Key changes apply to the next request; a running server picks up routing
// changes within a few seconds (it re-reads routing; see services.ts), at
// once with a shared database (STT_DATABASE_URL: the change is notified). The
// rules are the admin API's own (src/host): this file only adapts them.
import { loadConfig, ConfigError } from '../config';
import { openDatabase } from '../store/open-database';
import { SettingsStore } from '../store/settings';
import { ApiKeyStore } from '../store/api-keys';
import { LoadMarker } from '../stt/local/load-marker';
import { ProviderStore } from '../store/providers';
import { SecretBox } from '../store/secret-box';
import { Host } from '../host/host';
import { parseArgs } from 'node:util';
import type { z } from 'zod';
import { keyLimitsSchema } from '../routes/admin-schemas';
import { JobStore } from '../store/jobs';
import { cancelOrRemove } from '../jobs/cancel';
import { jobSummary } from '../jobs/view';

const USAGE = `usage: npm run admin -- <command>
  keys create <name>        create an API key (printed once)
  keys list                 list API keys
  keys revoke <id>          revoke an API key
  keys limits <id> [--rpm N|none] [--audio-per-day SECONDS|none] [--local-only yes|no]
                            set a key's audio requests per minute, audio seconds per UTC day,
                            and whether its audio may go to a cloud provider (none: no limit)
  runtime list              built-in local runtimes and whether they are installed
  runtime activate <id>     make a local runtime active (Local mode)
  runtime deactivate        no active local runtime
  aliases set [<name>...]   extra model names clients may send (e.g. large-v3); none clears them
  jobs list                 the 50 newest jobs of the jobs API, every key's
  jobs cancel <id>          cancel a job that has not ended (a server running it stops within
                            a third of STT_JOB_LEASE_SECONDS) and remove its recording
  status                    service id, routing, key count`;

async function main(argv: string[]): Promise<number> {
  const config = loadConfig();
  const db = await openDatabase(config);
  const settings = new SettingsStore(db);
  const keys = new ApiKeyStore(db);
  // Made on first use: only the runtime commands need it (and its provider store opens the secret key).
  const host = () => new Host({
    modelsDir: config.modelsDir,
    allowInsecureLoopback: config.allowInsecureLoopback,
    allowPrivateAddresses: config.allowPrivateAddresses,
    settings,
    providers: new ProviderStore(db, SecretBox.open(config.dataDir, config.secretKey)),
    loadMarker: new LoadMarker(config.dataDir),
  });
  const out = (v: unknown) => process.stdout.write((typeof v === 'string' ? v : JSON.stringify(v, null, 2)) + '\n');
  try {
    const [group, action, arg] = argv;
    if (group === 'keys' && action === 'create' && arg) {
      const k = await keys.create(arg);
      out({ id: k.id, name: k.name, prefix: k.prefix, createdAt: k.createdAt, key: k.key });
    } else if (group === 'keys' && action === 'list') {
      out(await keys.list());
    } else if (group === 'keys' && action === 'revoke' && arg) {
      const r = await keys.revoke(arg);
      if (!r) throw new Error(`no API key with id ${arg}`);
      out(r);
    } else if (group === 'keys' && action === 'limits' && arg) {
      const r = await keys.setLimits(arg, limitsFromArgs(argv.slice(3)));
      if (!r) throw new Error(`no API key with id ${arg}`);
      out(r);
    } else if (group === 'runtime' && action === 'list') {
      out(await host().listRuntimes());
    } else if (group === 'runtime' && action === 'activate' && arg) {
      out(await host().changeRouting({ mode: 'local', localModel: arg }));
    } else if (group === 'runtime' && action === 'deactivate') {
      out(await host().changeRouting({ localModel: null }));
    } else if (group === 'aliases' && action === 'set') {
      out(await host().changeRouting({ aliases: argv.slice(2) }));
    } else if (group === 'jobs' && action === 'list') {
      out((await new JobStore(db).list(null, 50)).map(jobSummary)); // as GET /admin/jobs lists them
    } else if (group === 'jobs' && action === 'cancel' && arg) {
      const jobs = new JobStore(db);
      const job = await jobs.get(arg);
      if (!job || !['queued', 'running'].includes(job.status) || !(await cancelOrRemove(jobs, config.spoolDir, job))) throw new Error(`no job ${arg} that has not ended`);
      out({ id: arg, status: 'cancelled' });
    } else if (group === 'status') {
      out({ serviceId: await settings.serviceId(), routing: await settings.routing(), apiKeys: (await keys.list()).length, dataDir: config.dataDir });
    } else {
      process.stderr.write(USAGE + '\n');
      return 2;
    }
    return 0;
  } finally {
    await db.close();
  }
}

/** The flags of `keys limits`, checked by the admin API's own schema. */
function limitsFromArgs(args: string[]): z.infer<typeof keyLimitsSchema> {
  const { values } = parseArgs({ args, options: { rpm: { type: 'string' }, 'audio-per-day': { type: 'string' }, 'local-only': { type: 'string' } } });
  const limit = (v: string | undefined) => (v === undefined ? undefined : v === 'none' ? null : /^\d+$/.test(v) ? Number(v) : NaN);
  const yesNo = (v: string | undefined) => (v === undefined ? undefined : v === 'yes' ? true : v === 'no' ? false : (v as unknown as boolean));
  const parsed = keyLimitsSchema.safeParse({ requestsPerMinute: limit(values.rpm), audioSecondsPerDay: limit(values['audio-per-day']), localOnly: yesNo(values['local-only']) });
  if (!parsed.success) {
    throw new Error(`invalid limits: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')} (numbers from 1, "none", or yes/no for --local-only)`);
  }
  return parsed.data;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`admin: ${err instanceof ConfigError ? 'invalid configuration: ' : ''}${(err as Error).message}\n`);
    process.exit(1);
  },
);
