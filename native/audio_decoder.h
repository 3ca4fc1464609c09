// Decodes an uploaded audio file held in memory to mono float32 at its own
// rate, whatever the container: WAV (wav_decoder.cpp), MP3, FLAC and
// Ogg/Vorbis (miniaudio's dr_mp3 and dr_flac, stb_vorbis: the copies the
// pinned whisper.cpp tree ships). The format is sniffed from the bytes, never
// from a file name. Pure C++, no N-API: the fuzz driver links it directly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "wav_decoder.h"

namespace stt {

struct DecodedAudio {
  // What was found, for errors and the answer: container ("wav", "mp3",
  // "flac", "ogg", "webm", "mp4") and codec ("pcm_s16", "mp3", "flac",
  // "vorbis", "opus", ...).
  std::string container;
  std::string codec;
  uint32_t sample_rate = 0;
  uint16_t channels = 0;
  WavInfo wav;  // WAV only: the header's details
  std::vector<float> mono;  // downmixed, at sample_rate
};

// What the bytes are, from their first bytes: a container and, where the
// first packet names it, the codec ("" when unknown). Unknown bytes: "".
struct Sniffed {
  std::string container;
  std::string codec;
};
Sniffed sniff_audio(const uint8_t* data, size_t size);

// Throws WavError with a stable code: the WAV decoder's own codes for WAV and
// unknown bytes; for the other containers `unsupported_codec` (a container or
// codec this build does not decode, named in the message), `corrupt_audio`
// (it could not be decoded), `audio_too_long` (more than `max_seconds`: from
// the header where the format has one, before decoding; otherwise decoding
// stops there), `unsupported_format` (a rate or channel count out of range).
DecodedAudio decode_audio(const uint8_t* data, size_t size, double max_seconds);

}  // namespace stt
