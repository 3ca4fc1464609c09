import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { loadConfig, ConfigError } from '../../src/config';
import { ownQuotaReader, usableCores } from '../../src/stt/local/cpu-quota';

const dataDir = path.join(os.tmpdir(), 'stt-config-test');
const aFile = path.join(os.tmpdir(), 'stt-config-test-file');
writeFileSync(aFile, 'not a directory');

test('defaults follow the contract', () => {
  const c = loadConfig({ STT_DATA_DIR: dataDir });
  assert.equal(c.port, 8080);
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.maxUploadBytes, 26214400);
  assert.equal(c.maxAudioSeconds, 3600);
  assert.deepEqual([c.headersTimeoutMs, c.uploadTimeoutMs, c.idleTimeoutMs, c.maxConnections], [30_000, 300_000, 30_000, 64]);
  assert.equal(c.modelsDir, path.join(dataDir, 'models'));
  assert.equal(c.threads, usableCores(os.availableParallelism(), ownQuotaReader()()), 'one per core this process may use');
  assert.equal(c.logLevel, 'info');
  assert.equal(c.encoderWindow, 'full');
  assert.equal(c.beamSize, 1, 'greedy, chosen by rule (decision 063)');
  assert.equal(c.followFreeCores, true, 'the decoder\'s threads follow the free cores');
  assert.equal(loadConfig({ STT_DATA_DIR: dataDir, STT_FOLLOW_FREE_CORES: 'false' }).followFreeCores, false);
  assert.equal(loadConfig({ STT_DATA_DIR: dataDir, STT_ENCODER_WINDOW: 'full' }).encoderWindow, 'full');
  assert.equal(loadConfig({ STT_DATA_DIR: dataDir, STT_ENCODER_WINDOW: 'tail' }).encoderWindow, 'tail');
  assert.equal(c.databaseUrl, null, 'SQLite in the data dir unless a database is named');
  assert.equal(c.storeGraceSeconds, 300);
  assert.equal(loadConfig({ STT_DATA_DIR: dataDir, STT_STORE_GRACE_S: '0' }).storeGraceSeconds, 0);
  assert.deepEqual([c.queueCapacity, c.queuePerKey], [16, 8], 'one key may hold half the queue');
  assert.deepEqual(c.openAiModelNames, ['whisper-1', 'gpt-4o-transcribe', 'gpt-4o-mini-transcribe', 'gpt-transcribe']);
  assert.deepEqual(loadConfig({ STT_DATA_DIR: dataDir, STT_OPENAI_MODEL_NAMES: '' }).openAiModelNames, []);
  assert.deepEqual(loadConfig({ STT_DATA_DIR: dataDir, STT_OPENAI_MODEL_NAMES: ' whisper-1 ,my-model' }).openAiModelNames, ['whisper-1', 'my-model']);
  assert.equal(loadConfig({ STT_DATA_DIR: dataDir, STT_QUEUE_CAPACITY: '0' }).queuePerKey, 1);
  assert.equal(loadConfig({ STT_DATA_DIR: dataDir, STT_QUEUE_PER_KEY: '16' }).queuePerKey, 16);
  assert.equal(loadConfig({ STT_DATA_DIR: dataDir, STT_DATABASE_URL: 'postgresql://u@db:5432/stt', STT_SECRET_KEY: 'ab'.repeat(32) }).databaseUrl, 'postgresql://u@db:5432/stt');
});

test('a bad value names its variable', () => {
  const bad: [Record<string, string>, string][] = [
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ STT_THREADS: '0' }, 'STT_THREADS'],
    [{ STT_MAX_UPLOAD_BYTES: '-5' }, 'STT_MAX_UPLOAD_BYTES'],
    [{ STT_MAX_AUDIO_SECONDS: '0' }, 'STT_MAX_AUDIO_SECONDS'],
    [{ STT_MAX_AUDIO_SECONDS: '200000' }, 'STT_MAX_AUDIO_SECONDS'],
    [{ STT_HEADERS_TIMEOUT_MS: '60000', STT_UPLOAD_TIMEOUT_MS: '30000' }, 'STT_HEADERS_TIMEOUT_MS'],
    [{ STT_IDLE_TIMEOUT_MS: '0' }, 'STT_IDLE_TIMEOUT_MS'],
    [{ STT_MAX_CONNECTIONS: '0' }, 'STT_MAX_CONNECTIONS'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ STT_DATA_DIR: path.join(aFile, 'data') }, 'STT_DATA_DIR'],
    [{ STT_MODEL_BASE_URL: 'ftp://x' }, 'STT_MODEL_BASE_URL'],
    [{ STT_ADMIN_KEY: 'short' }, 'STT_ADMIN_KEY'],
    [{ STT_METRICS_TOKEN: 'short' }, 'STT_METRICS_TOKEN'],
    [{ STT_METRICS_TOKEN: 'metrics-token-0123456789', STT_METRICS: 'public' }, 'STT_METRICS_TOKEN'],
    [{ STT_METRICS_TOKEN: 'metrics-token-0123456789', STT_METRICS: 'off' }, 'STT_METRICS_TOKEN'],
    [{ STT_METRICS_TOKEN: 'same-as-the-admin-key-01', STT_ADMIN_KEY: 'same-as-the-admin-key-01' }, 'STT_METRICS_TOKEN'],
    [{ STT_SHRINK_ENCODER_WINDOW: 'true' }, 'STT_SHRINK_ENCODER_WINDOW'],
    [{ STT_ENCODER_WINDOW: 'shrink' }, 'STT_ENCODER_WINDOW'],
    [{ STT_ENCODER_WINDOW: 'half' }, 'STT_ENCODER_WINDOW'],
    [{ STT_SCHEDULING: 'fifo' }, 'STT_SCHEDULING'],
    [{ STT_STORE_GRACE_S: '-1' }, 'STT_STORE_GRACE_S'],
    [{ STT_QUEUE_PER_KEY: '0' }, 'STT_QUEUE_PER_KEY'],
    [{ STT_OPENAI_MODEL_NAMES: 'whisper 1' }, 'STT_OPENAI_MODEL_NAMES'],
    [{ STT_STORE_GRACE_S: '100000' }, 'STT_STORE_GRACE_S'],
    [{ STT_THREADS: '2', STT_PARALLEL: '4' }, 'STT_PARALLEL'],
    [{ STT_DATABASE_URL: 'mysql://db/stt', STT_SECRET_KEY: 'ab'.repeat(32) }, 'STT_DATABASE_URL'],
    // Replicas must share the secret that seals provider keys: no per-replica key file.
    [{ STT_DATABASE_URL: 'postgres://db/stt' }, 'STT_SECRET_KEY'],
  ];
  for (const [env, variable] of bad) {
    assert.throws(() => loadConfig({ STT_DATA_DIR: dataDir, ...env }), (e) => e instanceof ConfigError && e.variable === variable, variable);
  }
});

test('slots and paused jobs fit libuv\'s pool with two threads to spare', () => {
  const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const c = loadConfig({ STT_DATA_DIR: dataDir, STT_THREADS: '64', STT_PARALLEL: '1' });
  assert.equal(c.threadpoolSize, pool);
  assert.equal(c.maxPaused, Math.min(1, pool - 3));
  const tooMany = String(pool - 1);
  assert.throws(() => loadConfig({ STT_DATA_DIR: dataDir, STT_THREADS: '64', STT_PARALLEL: tooMany }),
    (e) => e instanceof ConfigError && e.variable === 'STT_PARALLEL' && e.message.includes(`at least ${pool + 1}`) && e.message.includes(`UV_THREADPOOL_SIZE is ${pool}`));
  const fits = loadConfig({ STT_DATA_DIR: dataDir, STT_THREADS: '64', STT_PARALLEL: String(pool - 2) });
  assert.equal(fits.maxPaused, 0, 'no pool thread left for a paused job: none is paused');
});
