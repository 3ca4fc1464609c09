// How miniaudio is compiled here: decoding MP3 and FLAC only. Included before
// miniaudio.h by every file that uses it, so all of them see the same
// declarations. Vorbis is off: stb_vorbis 1.22 has known memory-safety faults
// in its header parsing (our fuzzer found two in minutes), so Ogg Vorbis waits
// for libvorbis.
#pragma once
#define MA_NO_DEVICE_IO
#define MA_NO_THREADING
#define MA_NO_ENCODING
#define MA_NO_GENERATION
#define MA_NO_RESOURCE_MANAGER
#define MA_NO_NODE_GRAPH
#define MA_NO_ENGINE
#define MA_NO_VORBIS
#define MA_NO_WAV  // WAV goes through our own fuzzed decoder (wav_decoder.cpp)
