// The third-party decoders, compiled once: miniaudio 0.11.24 with dr_mp3 and
// dr_flac inside, the copy in the pinned whisper.cpp tree's examples/
// (public domain / MIT-0). Built without our warning flags and with -fwrapv
// (CMakeLists.txt): their warnings are theirs, and dr_flac's prediction sums
// overflow on damaged input.
#include "miniaudio_config.h"
#define MINIAUDIO_IMPLEMENTATION
#include "miniaudio.h"
