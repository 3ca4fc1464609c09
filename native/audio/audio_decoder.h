// Decodes an uploaded audio file held in memory to 16-kHz mono float32,
// whatever the container: WAV (wav_decoder.cpp), MP3 and FLAC (miniaudio's
// dr_mp3 and dr_flac: the copies the pinned whisper.cpp tree ships). The
// format is sniffed from the bytes, never from a file name. Compressed
// formats are downmixed and resampled as they decode, so memory follows the
// audio's length (64 kB per second of output), never its compression ratio.
// Pure C++, no N-API: the fuzz driver links it directly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "wav_decoder.h"

namespace stt {

struct DecodedAudio {
  // What was found, for errors and the answer: container ("wav", "mp3",
  // "flac", ...) and codec ("pcm_s16", "mp3", "flac", ...).
  std::string container;
  std::string codec;
  uint32_t sample_rate = 0;  // the file's own
  uint16_t channels = 0;
  size_t frames = 0;         // at the file's own rate
  WavInfo wav;               // WAV only: the header's details
  std::vector<float> pcm;    // 16 kHz mono
};

// What the bytes are, from their first bytes (after an ID3v2 tag): a
// container and, where the header names it, the codec. Unknown bytes: "".
struct Sniffed {
  std::string container;
  std::string codec;
};
Sniffed sniff_audio(const uint8_t* data, size_t size);

// Throws WavError with a stable code: the WAV decoder's own codes for WAV and
// unknown bytes; otherwise `unsupported_codec` (a container or codec this
// build does not decode, named in the message), `corrupt_audio` (it could not
// be decoded), `audio_too_long` (more than `max_seconds`: from the header
// where the format states it, before decoding; otherwise decoding stops
// there), `unsupported_format` (a rate or channel count out of range).
DecodedAudio decode_audio(const uint8_t* data, size_t size, double max_seconds);

// WAV only (decodeWav, and decode_audio's WAV branch): the WAV decoder's codes, and audio_too_long past max_seconds.
DecodedAudio decode_wav_audio(const uint8_t* data, size_t size, double max_seconds);

}  // namespace stt
