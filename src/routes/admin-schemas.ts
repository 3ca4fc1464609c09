// The /admin request bodies: validated by the routes (jsonBody) and published
// in the OpenAPI document (src/routes/openapi.ts) from these same schemas.
import { z } from 'zod';

export const routingSchema = z.strictObject({
  mode: z.enum(['local', 'cloud']).optional(),
  localModel: z.string().nullable().optional(),
  cloud: z.strictObject({ providerId: z.string().min(1), model: z.string().min(1) }).nullable().optional(),
  aliases: z.array(z.string().max(200)).max(100).optional(),
  spillover: z.strictObject({
    providerId: z.string().min(1),
    model: z.string().min(1),
    maxWaitSeconds: z.number().min(0).max(86_400).nullable().optional(),
  }).nullable().optional(),
});

export const providerSchema = z.strictObject({
  name: z.string().min(1).max(100).optional(),
  kind: z.enum(['openai', 'deepgram']).optional(),
  baseUrl: z.string().max(2000).optional(),
  apiKey: z.string().min(1).max(1000).nullable().optional(),
  enabled: z.boolean().optional(),
  models: z.array(z.strictObject({ id: z.string().min(1).max(200), alias: z.string().min(1).max(200).nullable().optional() })).max(50).optional(),
});

// Checked before the trim, as the published schema can say it: at most 100 characters, not blank.
const keyLimitFields = {
  requestsPerMinute: z.int().min(1).max(1_000_000).nullable().optional(),
  audioSecondsPerDay: z.int().min(1).max(1_000_000_000).nullable().optional(),
  localOnly: z.boolean().optional(),
};
export const keySchema = z.strictObject({ name: z.string().max(100).regex(/\S/, 'must not be blank').trim(), ...keyLimitFields });
/** PATCH /admin/api-keys/{id}: a field left out stays; null removes a limit. */
export const keyLimitsSchema = z.strictObject(keyLimitFields);
export const downloadSchema = z.strictObject({ variant: z.string().min(1).max(200).optional() });
