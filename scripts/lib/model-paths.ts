import path from 'node:path';
import { ROOT, SHARED_MODELS_DIR } from '../../fixtures/paths';

/** The shared fixtures (headers with real vocabularies and mel filters). */
export const FIXTURES = SHARED_MODELS_DIR;
/** Where generated models go; never committed. */
export const SYNTHETIC_DIR = path.join(ROOT, 'models', 'synthetic');
