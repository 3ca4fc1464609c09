// The ranges the engines accept, which the HTTP form and the OpenAPI document
// hold to as well (through src/stt/capabilities.ts): written once, here, at
// the lowest layer.

/** Sampling temperature: OpenAI's range, and what whisper.cpp's fallback steps through. */
export const TEMPERATURE_RANGE = { min: 0, max: 1 } as const;
export const inTemperatureRange = (t: number) => t >= TEMPERATURE_RANGE.min && t <= TEMPERATURE_RANGE.max;
