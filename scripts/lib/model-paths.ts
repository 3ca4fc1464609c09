import path from 'node:path';

/** The shared fixtures (headers with real vocabularies and mel filters). */
export const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'shared', 'fixtures', 'models');
/** Where generated models go; never committed. */
export const SYNTHETIC_DIR = path.resolve(__dirname, '..', '..', 'models', 'synthetic');
