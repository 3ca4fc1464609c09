// Reads a CTranslate2 model.bin (binary version 4 and later), the format
// faster-whisper's conversions ship: a header, then every variable with its
// name, shape, dtype and raw little-endian bytes, then aliases. Layout as
// written by ctranslate2/specs/model_spec.py (_serialize) and read by
// src/models/model.cc (Model::load).
//   u32 binary_version, string spec_name, u32 revision, u32 n_variables,
//   n × { string name, u8 rank, u32 dims[rank], u8 dtype, u32 n_bytes, bytes },
//   u32 n_aliases, n × { string alias, string target }
//   string = u16 length including a trailing NUL, the bytes, NUL
const DTYPES = ['float32', 'int8', 'int16', 'int32', 'float16', 'bfloat16'] as const;
const ITEM_BYTES = { float32: 4, int8: 1, int16: 2, int32: 4, float16: 2, bfloat16: 2 } as const;
export type Ct2Dtype = (typeof DTYPES)[number];

export interface Ct2Variable {
  name: string;
  /** Row-major, PyTorch order. */
  dims: number[];
  dtype: Ct2Dtype;
  data: Buffer;
}

export interface Ct2Model {
  version: number;
  spec: string;
  revision: number;
  variables: Map<string, Ct2Variable>;
  aliases: Map<string, string>;
}

export function readCt2Model(buf: Buffer): Ct2Model {
  let pos = 0;
  const need = (n: number, what: string) => {
    if (pos + n > buf.length) throw new Error(`CTranslate2 model truncated while reading ${what} at byte ${pos}`);
  };
  const u8 = () => (need(1, 'u8'), buf.readUInt8(pos++));
  const u16 = () => (need(2, 'u16'), (pos += 2), buf.readUInt16LE(pos - 2));
  const u32 = () => (need(4, 'u32'), (pos += 4), buf.readUInt32LE(pos - 4));
  const string = () => {
    const n = u16();
    need(n, 'string');
    if (n === 0 || buf[pos + n - 1] !== 0) throw new Error(`malformed string at byte ${pos}`);
    const s = buf.toString('utf8', pos, pos + n - 1);
    pos += n;
    return s;
  };

  const version = u32();
  if (version < 4 || version > 6) throw new Error(`CTranslate2 binary version ${version} is not one this reader knows (4-6)`);
  const spec = string();
  const revision = u32();
  const variables = new Map<string, Ct2Variable>();
  for (let i = u32(); i > 0; i--) {
    const name = string();
    const dims = Array.from({ length: u8() }, u32);
    const dtype = DTYPES[u8()];
    if (!dtype) throw new Error(`${name}: unknown dtype`);
    const bytes = u32();
    if (bytes !== dims.reduce((a, b) => a * b, 1) * ITEM_BYTES[dtype]) throw new Error(`${name}: ${bytes} bytes do not fit ${dtype}[${dims}]`);
    need(bytes, name);
    variables.set(name, { name, dims, dtype, data: buf.subarray(pos, pos + bytes) });
    pos += bytes;
  }
  const aliases = new Map<string, string>();
  for (let i = u32(); i > 0; i--) aliases.set(string(), string());
  if (pos !== buf.length) throw new Error(`${buf.length - pos} bytes after the alias table`);
  return { version, spec, revision, variables, aliases };
}
