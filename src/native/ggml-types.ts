// ggml tensor types that may appear in whisper.cpp model files: bytes per block
// and elements per block (ggml.c's type_traits).
export const GGML_TYPES: Record<number, { name: string; typeSize: number; blockSize: number }> = {
  0: { name: 'f32', typeSize: 4, blockSize: 1 },
  1: { name: 'f16', typeSize: 2, blockSize: 1 },
  2: { name: 'q4_0', typeSize: 18, blockSize: 32 },
  3: { name: 'q4_1', typeSize: 20, blockSize: 32 },
  6: { name: 'q5_0', typeSize: 22, blockSize: 32 },
  7: { name: 'q5_1', typeSize: 24, blockSize: 32 },
  8: { name: 'q8_0', typeSize: 34, blockSize: 32 },
  10: { name: 'q2_k', typeSize: 84, blockSize: 256 },
  11: { name: 'q3_k', typeSize: 110, blockSize: 256 },
  12: { name: 'q4_k', typeSize: 144, blockSize: 256 },
  13: { name: 'q5_k', typeSize: 176, blockSize: 256 },
  14: { name: 'q6_k', typeSize: 210, blockSize: 256 },
  30: { name: 'bf16', typeSize: 2, blockSize: 1 },
};

export const GGML_FILE_MAGIC = 0x67676d6c;
/** whisper.cpp stores ftype + 1000 * quantisation version. */
export const GGML_QNT_VERSION_FACTOR = 1000;

export function tensorBytes(type: number, elements: number): number {
  const t = GGML_TYPES[type];
  if (!t) throw new Error(`unknown ggml type ${type}`);
  return (elements / t.blockSize) * t.typeSize;
}
