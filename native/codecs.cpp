// The third-party decoders, compiled once: miniaudio 0.11.24 (with dr_mp3 and
// dr_flac inside) and stb_vorbis, the copies in the pinned whisper.cpp tree's
// examples/ (MIT-0 / public domain). Built without our warning flags: their
// warnings are theirs (CMakeLists.txt).
#include "miniaudio_config.h"
#define MINIAUDIO_IMPLEMENTATION
#include "miniaudio.h"
#undef STB_VORBIS_HEADER_ONLY
#include "stb_vorbis.c"
