#!/usr/bin/env node
// Writes a patched copy of the pinned tree's stb_vorbis.c (1.22) into OUT_DIR:
// the comment header's lengths are checked before they size an allocation,
// and a comment header refused half-way leaves nothing for vorbis_deinit to
// free that was never allocated. Unpatched, a vendor or comment length of
// 0xFFFFFFFF makes `len + 1` zero and the copy loop writes past the buffer,
// a huge comment count overflows the size of the list, and a failure between
// them frees uninitialised pointers (all found by scripts/fuzz-wav.sh under
// ASan). Used by CMakeLists.txt for the addon and by the fuzz script, so both
// compile the same source. Could go upstream (stb's issue tracker has reports
// of the comment-header overflows). Usage: patch-stb-vorbis.js EXAMPLES_DIR OUT_DIR
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const [examples, outDir] = process.argv.slice(2);
if (!examples || !outDir) {
  console.error('usage: patch-stb-vorbis.js EXAMPLES_DIR OUT_DIR');
  process.exit(2);
}
let source = fs.readFileSync(path.join(examples, 'stb_vorbis.c'), 'utf8');

/** [what, the text, how many times it must occur, what replaces it]. */
const PATCHES = [
  ['vendor and comment lengths', '   len = get32_packet(f);\n', 2,
    '   len = get32_packet(f);\n   if (len < 0 || len > (1 << 24))                  return error(f, VORBIS_invalid_setup);\n'],
  // vorbis_deinit frees comment_list_length entries of the list: a refused count or a list not allocated must leave 0.
  ['comment count', '   f->comment_list_length = get32_packet(f);\n', 1,
    '   f->comment_list_length = get32_packet(f);\n   if (f->comment_list_length < 0 || f->comment_list_length > (1 << 16)) { f->comment_list_length = 0; return error(f, VORBIS_invalid_setup); }\n'],
  // ...and entries a failed allocation left unset must be NULL, not whatever malloc returned.
  ['comment list allocation', '      if (f->comment_list == NULL)                  return error(f, VORBIS_outofmem);\n', 1,
    '      if (f->comment_list == NULL) { f->comment_list_length = 0; return error(f, VORBIS_outofmem); }\n      memset(f->comment_list, 0, sizeof(char*) * f->comment_list_length);\n'],
];
for (const [what, text, times, replacement] of PATCHES) {
  const found = source.split(text).length - 1;
  if (found !== times) {
    console.error(`patch-stb-vorbis: "${what}" occurs ${found} times in stb_vorbis.c, expected ${times}: the pinned source changed`);
    process.exit(1);
  }
  source = source.split(text).join(replacement);
}
fs.mkdirSync(outDir, { recursive: true });
const out = path.join(outDir, 'stb_vorbis.c');
// Rewritten only when it changes, so a rebuild does not recompile the decoders for nothing.
if (!fs.existsSync(out) || fs.readFileSync(out, 'utf8') !== source) fs.writeFileSync(out, source);
