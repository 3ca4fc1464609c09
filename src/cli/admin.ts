// Headless host administration against the data directory:
//   npm run admin -- keys create <name> | keys list | keys revoke <id>
//   npm run admin -- runtime list | runtime activate <id> | runtime deactivate
//   npm run admin -- status
// Key changes apply to the next request; a running server picks up routing
// changes within a few seconds (it re-reads routing; see services.ts).
import { loadConfig, ConfigError } from '../config';
import { Database } from '../store/db';
import { SettingsStore } from '../store/settings';
import { ApiKeyStore } from '../store/api-keys';
import { installedFile, RUNTIMES, runtimeById } from '../stt/catalogue';
import { inspectModelFile } from '../native/model-file';
import { LoadMarker } from '../stt/local/load-marker';

const USAGE = `usage: npm run admin -- <command>
  keys create <name>        create an API key (printed once)
  keys list                 list API keys
  keys revoke <id>          revoke an API key
  runtime list              built-in local runtimes and whether they are installed
  runtime activate <id>     make a local runtime active (Local mode)
  runtime deactivate        no active local runtime
  status                    service id, routing, key count`;

async function main(argv: string[]): Promise<number> {
  const config = loadConfig();
  const db = await Database.open(config.dataDir);
  const settings = new SettingsStore(db);
  const keys = new ApiKeyStore(db);
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
    } else if (group === 'runtime' && action === 'list') {
      const routing = await settings.routing();
      out(await Promise.all(RUNTIMES.map(async (r) => {
        const f = await installedFile(config.modelsDir, r);
        return { id: r.id, family: r.family, installed: !!f, file: f?.name ?? null, bytes: f?.bytes ?? null, active: routing.localModel === r.id };
      })));
    } else if (group === 'runtime' && action === 'activate' && arg) {
      const spec = runtimeById(arg);
      if (!spec) throw new Error(`unknown runtime ${arg}; known: ${RUNTIMES.map((r) => r.id).join(', ')}`);
      const f = await installedFile(config.modelsDir, spec);
      if (!f) throw new Error(`runtime ${arg} is not installed: put one of ${spec.files.map((x) => x.name).join(', ')} in ${config.modelsDir}`);
      const info = await inspectModelFile(f.path);
      if (info.family !== spec.family) throw new Error(`${f.name} is a ${info.family} model, ${arg} needs ${spec.family}`);
      await settings.setRouting({ ...(await settings.routing()), mode: 'local', localModel: arg });
      // The host's explicit choice lifts a crashed load's block (a running server notices within its routing poll).
      new LoadMarker(config.dataDir).clear();
      out(await settings.routing());
    } else if (group === 'runtime' && action === 'deactivate') {
      await settings.setRouting({ ...(await settings.routing()), localModel: null });
      new LoadMarker(config.dataDir).clear();
      out(await settings.routing());
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`admin: ${err instanceof ConfigError ? 'invalid configuration: ' : ''}${(err as Error).message}\n`);
    process.exit(1);
  },
);
