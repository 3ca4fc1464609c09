// GET /openapi.json: an OpenAPI 3.1 description of every route. The admin
// request bodies come from the zod schemas the routes validate with
// (admin-schemas.ts), the admin answers and /ready's from the zod schemas the
// handlers and the settings page are typed by (src/admin-api.ts); the
// transcription form and answers are written here. CI holds the live server
// to all of it with schemathesis (test/http/openapi.test.ts).
import { z } from 'zod';
import { downloadSchema, keyLimitsSchema, keySchema, providerSchema, routingSchema } from './admin-schemas';
import {
  adminStatusSchema, apiKeyViewSchema, createdApiKeySchema, downloadStartedSchema, jobSummarySchema, listOf, providerViewSchema, readyViewSchema,
  routingViewSchema, runtimeEntrySchema,
} from '../admin-api';
import { RESPONSE_FORMATS } from '../stt/formats';
import { GUARD_WARNING_CODES } from '../stt/guard-warnings';
import { MAX_PROMPT_CHARS, TEMPERATURE_RANGE } from '../stt/capabilities';
import { FORM_FIELDS, type FormField } from './transcription-request';

type Schema = Record<string, unknown>;

const str = (extra: Schema = {}): Schema => ({ type: 'string', ...extra });
const num: Schema = { type: 'number' };
const int: Schema = { type: 'integer' };
const nullable = (s: Schema): Schema => ({ anyOf: [s, { type: 'null' }] });
const obj = (properties: Record<string, Schema>, optional: string[] = []): Schema => ({
  type: 'object',
  properties,
  required: Object.keys(properties).filter((k) => !optional.includes(k)),
});
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** A zod schema as the document's JSON Schema (draft 2020-12, which OpenAPI 3.1 uses): as a request body is read, or as an answer is written. */
function fromZod(schema: z.ZodType, io: 'input' | 'output' = 'input'): Schema {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io }) as Schema;
  return json;
}
const answerSchema = (schema: z.ZodType): Schema => fromZod(schema, 'output');
/** An admin list answer, `{ data: [...] }`. */
const listSchema = (item: z.ZodType): Schema => answerSchema(listOf(item));

const routing = answerSchema(routingViewSchema);
const provider = answerSchema(providerViewSchema);
const apiKey = answerSchema(apiKeyViewSchema);
const usage = obj({ type: str({ const: 'duration' }), seconds: int });
const segment = obj({
  id: int, seek: int, start: num, end: num, text: str(), tokens: { type: 'array', items: int },
  temperature: num, avg_logprob: num, compression_ratio: num, no_speech_prob: num,
});
const word = obj({ word: str(), start: num, end: num });
const guardWarning = obj({ code: str({ enum: [...GUARD_WARNING_CODES] }), message: str() });
const transcription = {
  oneOf: [
    obj({ text: str(), usage }),
    obj({
      task: str({ enum: ['transcribe', 'translate'] }), language: str(), duration: num, text: str(),
      segments: { type: 'array', items: segment }, words: { type: 'array', items: word },
      warnings: { type: 'array', items: guardWarning, description: 'Not an OpenAI field: the guards against text where nobody speaks, or against loops, that changed this answer. Present only when one did.' },
      usage,
    }, ['segments', 'words', 'warnings']),
  ],
};
const model = obj({ id: str(), object: str({ const: 'model' }), created: int, owned_by: str() });

const error = (description: string) => ({ description, content: { 'application/json': { schema: ref('Error') } } });
const json = (description: string, schema: Schema) => ({ description, content: { 'application/json': { schema } } });
/** What every guarded route may answer besides its own: a wrong key, a Host not allowed. */
const GUARDED = { 401: error('Missing or wrong bearer key'), 403: error('Host not allowed') };
const JSON_BODY = { 400: error('Invalid body'), 413: error('Body too large'), 415: error('Not JSON'), 422: error('Unprocessable') };
const idParam = (description: string) => [{ name: 'id', in: 'path', required: true, description, schema: str() }];

/** Every field the form parser accepts (FORM_FIELDS), typed so a field without a schema does not compile. */
const FIELD_SCHEMAS: Record<FormField, Schema> = {
  model: str({ description: 'The public model (GET /v1/models) or one of the host\'s aliases' }),
  language: str({ description: 'ISO-639-1; omitted: detected' }),
  prompt: str({ maxLength: MAX_PROMPT_CHARS }),
  response_format: str({ enum: [...RESPONSE_FORMATS] }),
  temperature: { ...num, minimum: TEMPERATURE_RANGE.min, maximum: TEMPERATURE_RANGE.max },
  'timestamp_granularities[]': { type: 'array', items: str({ enum: ['segment', 'word'] }) },
  chunking_strategy: str({ description: '"auto" or a JSON server_vad object' }),
  stream: { type: 'boolean', description: 'Server-sent events as text is decoded (response_format json or text); with other formats ignored, as OpenAI ignores it for whisper-1' },
  'include[]': { type: 'array', items: str({ enum: ['logprobs'] }), description: 'logprobs: each token\'s log-probability in the json answer (response_format json, local Whisper)' },
  'languages[]': { type: 'array', items: str(), maxItems: 1, description: 'One language, as `language` (Whisper takes one or detects among all)' },
  'keywords[]': { type: 'array', items: str(), maxItems: 0, description: 'Refused (400 unsupported_parameter): use a prompt with the words' },
  'known_speaker_names[]': { type: 'array', items: str(), maxItems: 0, description: 'Refused (400 unsupported_parameter): no diarization here' },
  'known_speaker_references[]': { type: 'array', items: str(), maxItems: 0, description: 'Refused (400 unsupported_parameter): no diarization here' },
};

function audioOperation(task: 'transcribe' | 'translate'): Schema {
  const fields: Record<string, Schema> = {
    file: str({ format: 'binary', description: 'Audio: WAV (PCM 8-32 bit, float, A-law, mu-law), MP3, FLAC, Ogg (Opus, Vorbis) or WebM/Matroska (Opus); 1-8 channels, 8-192 kHz; the format is read from the bytes' }),
    ...Object.fromEntries(FORM_FIELDS[task].map((name) => [name, FIELD_SCHEMAS[name]])),
  };
  return {
    operationId: task === 'transcribe' ? 'createTranscription' : 'createTranslation',
    summary: task === 'transcribe' ? 'Transcribe audio' : 'Translate audio into English text',
    security: [{ apiKey: [] }],
    requestBody: {
      required: true,
      content: { 'multipart/form-data': { schema: { type: 'object', properties: fields, required: ['file'] } } },
    },
    responses: {
      200: {
        description: 'The transcript in the requested format',
        content: {
          'application/json': { schema: transcription },
          'text/plain': { schema: str() },
          'application/x-subrip': { schema: str() },
          'text/vtt': { schema: str() },
          ...(task === 'transcribe' && {
            'text/event-stream': { schema: str({ description: 'stream=true: transcript.text.delta events, then transcript.text.done (or an error event)' }) },
          }),
        },
      },
      ...GUARDED,
      400: error('Invalid field or audio'),
      413: error('Upload too large'),
      415: error('Not multipart/form-data'),
      429: error('Over the key\'s request rate or daily audio budget (Retry-After, x-ratelimit-* headers)'),
      499: error('The client left'),
      502: error('The model or provider failed'),
      503: error('Busy, loading or shutting down (Retry-After)'),
      504: error('Deadline passed'),
    },
  };
}

const STORE_BUSY = { 503: error('The database is busy or unreachable (Retry-After)') };
const jobId = [{ name: 'id', in: 'path', required: true, description: 'A job id (job_...)', schema: str() }];
const job = obj({
  id: str(), object: str({ const: 'audio.job' }), status: str({ enum: ['queued', 'running', 'done', 'failed', 'cancelled'] }),
  created_at: int, started_at: nullable(int), finished_at: nullable(int), response_format: str({ enum: [...RESPONSE_FORMATS] }),
  progress: obj({ seconds_done: num, seconds_total: num }),
  callback_url: str(),
  callback_status: str({ enum: ['waiting', 'pending', 'delivered', 'failed', 'not_sent'], description: 'waiting: the job has not ended; pending: being delivered or retried; not_sent: the job was cancelled' }),
  result: { description: 'Once done: the answer in response_format (json and verbose_json as an object, the others as a string)' },
  error: { ...obj({ message: str(), type: str(), param: nullable(str()), code: str() }), description: 'Once failed: the error, as a transcription would have answered it' },
}, ['result', 'error', 'callback_url', 'callback_status']);

/** POST /v1/audio/jobs: a transcription's form (but stream and include[]), answered 202 at once. */
function jobOperation(): Schema {
  const fields: Record<string, Schema> = {
    file: str({ format: 'binary', description: 'A recording in any format a transcription takes, up to STT_MAX_JOB_UPLOAD_BYTES and STT_MAX_JOB_AUDIO_SECONDS' }),
    ...Object.fromEntries(FORM_FIELDS.transcribe.filter((name) => name !== 'stream' && name !== 'include[]').map((name) => [name, FIELD_SCHEMAS[name]])),
    callback_url: str({ description: 'https URL the job\'s view is POSTed to when it ends, signed (Stt-Signature) with the key\'s callback secret' }),
  };
  return {
    operationId: 'createJob',
    summary: 'Transcribe a long recording as a job: 202 at once, the answer fetched later',
    security: [{ apiKey: [] }],
    requestBody: { required: true, content: { 'multipart/form-data': { schema: { type: 'object', properties: fields, required: ['file'] } } } },
    responses: {
      202: json('Accepted and queued (Location: the job)', job),
      ...GUARDED,
      400: error('Invalid field or audio'),
      409: error('The server sends transcriptions to a cloud provider: jobs run on the local runtime'),
      413: error('Upload too large'),
      415: error('Not multipart/form-data'),
      429: error('Over the key\'s request rate, daily audio budget or jobs (too_many_jobs)'),
      499: error('The client left'),
      502: error('No local model is active'),
      503: error('The database is busy or unreachable, or the spool\'s disk is too full for another upload (spool_full); Retry-After'),
    },
  };
}

export function openApiDocument(version: string): Schema {
  const admin = { security: [{ adminKey: [] }] };
  return {
    openapi: '3.1.0',
    info: { title: 'stt-gateway', version, description: 'OpenAI-compatible speech-to-text: local Whisper/Parakeet or cloud providers.' },
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (sk-stt-...) from /admin/api-keys' },
        adminKey: { type: 'http', scheme: 'bearer', description: 'The admin key (STT_ADMIN_KEY or data/admin.key)' },
      },
      schemas: {
        Error: obj({ error: obj({ message: str(), type: str(), param: nullable(str()), code: str() }) }),
      },
    },
    paths: {
      '/health': { get: { operationId: 'health', responses: { 200: json('Alive', obj({ serviceId: str(), version: str(), publicModel: str() })), 403: GUARDED[403] } } },
      '/metrics': {
        get: {
          operationId: 'metrics',
          summary: 'Prometheus metrics (STT_METRICS: admin key by default, or STT_METRICS_TOKEN; public; or off: 404)',
          security: [{ adminKey: [] }],
          responses: { 200: { description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: str() } } }, ...GUARDED },
        },
      },
      '/ready': {
        get: {
          operationId: 'ready',
          summary: 'Whether the current route can serve a transcription now',
          responses: {
            200: json('Ready', answerSchema(readyViewSchema)),
            403: GUARDED[403],
            503: error('Not ready: model_loading, no_active_model, model_load_failed, provider_unavailable or provider_failing'),
          },
        },
      },
      '/openapi.json': { get: { operationId: 'openapi', responses: { 200: json('This document', { type: 'object' }), 403: GUARDED[403] } } },
      '/v1/models': { get: { operationId: 'listModels', security: [{ apiKey: [] }], responses: { 200: json('Models', obj({ object: str({ const: 'list' }), data: { type: 'array', items: model } })), ...GUARDED } } },
      '/v1/models/{id}': {
        get: { operationId: 'retrieveModel', security: [{ apiKey: [] }], parameters: idParam('A model id'), responses: { 200: json('The model', model), ...GUARDED, 404: error('No such model') } },
      },
      '/v1/audio/transcriptions': { post: audioOperation('transcribe') },
      '/v1/audio/translations': { post: audioOperation('translate') },
      '/v1/audio/jobs': {
        post: jobOperation(),
        get: {
          operationId: 'listJobs', security: [{ apiKey: [] }], summary: 'This key\'s jobs, newest first, without their results (GET each by id for its result)',
          parameters: [{ name: 'after', in: 'query', required: false, description: 'The last job id of the previous page', schema: str() }],
          responses: { 200: json('Jobs', obj({ object: str({ const: 'list' }), data: { type: 'array', items: job }, has_more: { type: 'boolean' } })), ...GUARDED, 400: error('after is not one of this key\'s jobs'), ...STORE_BUSY },
        },
      },
      '/v1/audio/job-callbacks/secret': {
        get: {
          operationId: 'getJobCallbackSecret', security: [{ apiKey: [] }], summary: 'The secret this key\'s job callbacks are signed with',
          responses: { 200: json('The secret', obj({ object: str({ const: 'audio.job.callback_secret' }), secret: str() })), ...GUARDED },
        },
      },
      '/v1/audio/jobs/{id}': {
        get: { operationId: 'retrieveJob', security: [{ apiKey: [] }], parameters: jobId, responses: { 200: json('The job', job), ...GUARDED, 404: error('No such job of this key'), ...STORE_BUSY } },
        delete: {
          operationId: 'deleteJob', security: [{ apiKey: [] }], parameters: jobId, summary: 'Cancels a job, or removes an ended one; its recording is removed',
          responses: { 204: { description: 'Cancelled or removed' }, ...GUARDED, 404: error('No such job of this key'), ...STORE_BUSY },
        },
      },
      '/admin/status': {
        get: {
          operationId: 'adminStatus', ...admin,
          responses: {
            200: json('Status', answerSchema(adminStatusSchema)),
            ...GUARDED,
          },
        },
      },
      '/admin/routing': {
        get: { operationId: 'getRouting', ...admin, responses: { 200: json('Routing', routing), ...GUARDED } },
        put: {
          operationId: 'putRouting', ...admin,
          // No body is an empty change: the routing as it is.
          requestBody: { required: false, content: { 'application/json': { schema: fromZod(routingSchema) } } },
          responses: { 200: json('The routing now', routing), ...GUARDED, ...JSON_BODY, 409: error('Runtime not installed or its file of another family') },
        },
      },
      '/admin/local-models': { get: { operationId: 'listLocalModels', ...admin, responses: { 200: json('Runtimes', listSchema(runtimeEntrySchema)), ...GUARDED } } },
      '/admin/local-models/{id}/download': {
        post: {
          operationId: 'downloadLocalModel', ...admin, parameters: idParam('A runtime id'),
          requestBody: { required: false, content: { 'application/json': { schema: fromZod(downloadSchema) } } },
          responses: { 202: json('Started', answerSchema(downloadStartedSchema)), ...GUARDED, ...JSON_BODY, 404: error('Unknown runtime'), 409: error('Already downloading') },
        },
      },
      '/admin/local-models/{id}': {
        delete: { operationId: 'deleteLocalModel', ...admin, parameters: idParam('A runtime id'), responses: { 204: { description: 'Deleted' }, ...GUARDED, 404: error('Unknown runtime'), 409: error('Active or downloading') } },
      },
      '/admin/providers': { get: { operationId: 'listProviders', ...admin, responses: { 200: json('Providers', listSchema(providerViewSchema)), ...GUARDED } } },
      '/admin/providers/{id}': {
        put: {
          operationId: 'putProvider', ...admin, parameters: idParam('A provider id: 1-64 of a-z 0-9 _ -'),
          // No body changes nothing of an existing provider (a new one needs kind and baseUrl: 400).
          requestBody: { required: false, content: { 'application/json': { schema: fromZod(providerSchema) } } },
          responses: { 200: json('Updated', provider), 201: json('Created', provider), ...GUARDED, ...JSON_BODY, 409: error('It serves the live cloud route') },
        },
      },
      '/admin/api-keys': {
        get: { operationId: 'listApiKeys', ...admin, responses: { 200: json('Keys', listSchema(apiKeyViewSchema)), ...GUARDED } },
        post: {
          operationId: 'createApiKey', ...admin,
          requestBody: { required: true, content: { 'application/json': { schema: fromZod(keySchema) } } },
          responses: { 201: json('Created (the key is shown once)', answerSchema(createdApiKeySchema)), ...GUARDED, ...JSON_BODY },
        },
      },
      '/admin/api-keys/{id}': {
        patch: {
          operationId: 'setApiKeyLimits', ...admin, parameters: idParam('An API key id'),
          summary: 'Set a key\'s limits: a field left out stays, null removes the limit',
          // No body changes nothing (as for PUT /admin/providers/{id}).
          requestBody: { required: false, content: { 'application/json': { schema: fromZod(keyLimitsSchema) } } },
          responses: { 200: json('Updated', apiKey), ...GUARDED, ...JSON_BODY, 404: error('No such key') },
        },
      },
      '/admin/jobs': { get: { operationId: 'listAllJobs', ...admin, summary: 'Every key\'s jobs of the jobs API, newest first (50)', responses: { 200: json('Jobs', listSchema(jobSummarySchema)), ...GUARDED } } },
      '/admin/jobs/{id}': {
        delete: {
          operationId: 'deleteAnyJob', ...admin, parameters: idParam('A job id'), summary: 'Cancels a job, or removes an ended one, whatever its key',
          responses: { 204: { description: 'Cancelled or removed' }, ...GUARDED, 404: error('No such job') },
        },
      },
      '/admin/api-keys/{id}/revoke': {
        post: { operationId: 'revokeApiKey', ...admin, parameters: idParam('An API key id'), responses: { 200: json('Revoked', apiKey), ...GUARDED, 404: error('No such key') } },
      },
    },
  };
}
