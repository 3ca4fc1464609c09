// Which runtime a host may make active: one the catalogue knows, whose file
// is installed and holds a model of the runtime's family (a Whisper file under
// a Parakeet name would load and then fail every request). A damaged file is
// the load's to report.
import { inspectModelFile, ModelFileError } from '../native/model-file';
import { installedFile, RUNTIMES, runtimeById, type RuntimeSpec } from '../stt/catalogue';
import { ConflictError, InvalidInputError, NotFoundError } from '../domain-errors';

export function knownRuntime(id: string, param: string, missing: 'invalid' | 'not_found' = 'invalid'): RuntimeSpec {
  const spec = runtimeById(id);
  if (spec) return spec;
  const message = `Unknown local runtime "${id}"; known: ${RUNTIMES.map((r) => r.id).join(', ')}.`;
  throw missing === 'not_found' ? new NotFoundError('unknown_runtime', message, param) : new InvalidInputError('unknown_runtime', message, param);
}

export async function activatableRuntime(modelsDir: string, id: string, param: string): Promise<RuntimeSpec> {
  const spec = knownRuntime(id, param);
  const file = await installedFile(modelsDir, spec);
  if (!file) {
    throw new ConflictError('runtime_not_installed',
      `The runtime "${spec.id}" is not installed; download it first, or put ${spec.files.map((f) => f.name).join(' or ')} in the models directory.`, param);
  }
  // A file that cannot be read as a model is left to the load, which says why in /admin/status.
  const info = await inspectModelFile(file.path).catch((err) => {
    if (err instanceof ModelFileError) return null;
    throw err;
  });
  if (info && info.family !== spec.family) {
    throw new ConflictError('runtime_file_mismatch', `${file.name} holds a ${info.family} model; ${spec.id} needs ${spec.family}.`, param);
  }
  return spec;
}
