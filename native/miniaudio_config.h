// How miniaudio (and stb_vorbis, which it decodes Vorbis with) is compiled
// here: decoding only. Included before miniaudio.h by every file that uses it,
// so all of them see the same declarations.
#pragma once
#define STB_VORBIS_HEADER_ONLY
#include "stb_vorbis.c"
#define MA_NO_DEVICE_IO
#define MA_NO_THREADING
#define MA_NO_ENCODING
#define MA_NO_GENERATION
#define MA_NO_RESOURCE_MANAGER
#define MA_NO_NODE_GRAPH
#define MA_NO_ENGINE
#define MA_NO_WAV  // WAV goes through our own fuzzed decoder (wav_decoder.cpp)
