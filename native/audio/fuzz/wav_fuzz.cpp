// Bounded fuzz run of the WAV decoder under AddressSanitizer and UBSan.
// Mutates headers of valid WAV seeds with a seeded generator (no libFuzzer
// needed, so g++ alone builds it); any over-read aborts the process.
// Usage: wav_fuzz <iterations> <seed>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "resampler.h"
#include "wav_decoder.h"

namespace {

std::vector<uint8_t> make_seed(uint16_t tag, uint16_t channels, uint32_t rate, uint16_t bits, size_t frames, bool extensible,
                               bool list_chunk) {
  std::vector<uint8_t> out;
  auto put16 = [&](uint16_t v) { out.push_back(v & 0xff); out.push_back(v >> 8); };
  auto put32 = [&](uint32_t v) { for (int i = 0; i < 4; ++i) out.push_back((v >> (8 * i)) & 0xff); };
  auto tag4 = [&](const char* s) { out.insert(out.end(), s, s + 4); };
  const uint16_t block = channels * (bits / 8);
  tag4("RIFF"); put32(0); tag4("WAVE");
  if (list_chunk) { tag4("LIST"); put32(5); tag4("INFO"); out.push_back('x'); out.push_back(0); }
  tag4("fmt "); put32(extensible ? 40 : 16);
  put16(extensible ? 0xFFFE : tag); put16(channels); put32(rate); put32(rate * block); put16(block); put16(bits);
  if (extensible) {
    put16(22); put16(bits); put32(3); put16(tag);
    const uint8_t tail[14] = {0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71};
    out.insert(out.end(), tail, tail + 14);
  }
  tag4("data"); put32(static_cast<uint32_t>(frames * block));
  for (size_t i = 0; i < frames * block; ++i) out.push_back(static_cast<uint8_t>(i * 37));
  const uint32_t riff = static_cast<uint32_t>(out.size() - 8);
  std::memcpy(out.data() + 4, &riff, 4);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::stol(argv[1]) : 20000;
  const unsigned seed = argc > 2 ? static_cast<unsigned>(std::stoul(argv[2])) : 1;
  std::mt19937 rng(seed);
  const std::vector<std::vector<uint8_t>> seeds = {
      make_seed(1, 1, 16000, 16, 64, false, false), make_seed(1, 2, 44100, 24, 50, true, true),
      make_seed(3, 1, 48000, 32, 40, false, true),  make_seed(3, 6, 8000, 64, 20, true, false),
      make_seed(6, 1, 8000, 8, 100, false, false),  make_seed(7, 2, 22050, 8, 100, false, true),
      make_seed(1, 8, 192000, 8, 30, false, false),
  };
  // A decoder that refused everything would pass the fuzz below: every seed, unmutated, must decode.
  for (size_t i = 0; i < seeds.size(); ++i) {
    try {
      (void)stt::decode_wav(seeds[i].data(), seeds[i].size());
    } catch (const stt::WavError& e) {
      std::fprintf(stderr, "wav fuzz: valid seed %zu was refused: %s\n", i, e.what());
      return 1;
    }
  }
  long accepted = 0, rejected = 0;
  for (long it = 0; it < iterations; ++it) {
    std::vector<uint8_t> buf = seeds[rng() % seeds.size()];
    const int mutations = 1 + static_cast<int>(rng() % 6);
    for (int m = 0; m < mutations; ++m) {
      const size_t header = std::min<size_t>(buf.size(), 80);
      switch (rng() % 6) {
        case 0: buf[rng() % header] = static_cast<uint8_t>(rng()); break;                         // byte in header
        case 1: { const size_t at = rng() % (header - 3); const uint32_t v = rng(); std::memcpy(&buf[at], &v, 4); break; }
        case 2: { const size_t at = rng() % (header - 3); const uint32_t v = 0xFFFFFFFFu - (rng() % 3); std::memcpy(&buf[at], &v, 4); break; }
        case 3: buf.resize(rng() % (buf.size() + 1)); break;                                     // truncate anywhere
        case 4: buf[rng() % buf.size()] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        default: buf.insert(buf.begin() + static_cast<long>(rng() % (buf.size() + 1)), static_cast<uint8_t>(rng())); break;
      }
      if (buf.size() < 4) break;
    }
    try {
      stt::DecodedWav d = stt::decode_wav(buf.data(), buf.size());
      std::vector<float> pcm = stt::Resampler::resample(d.mono, d.info.sample_rate, 16000);
      (void)pcm;
      ++accepted;
    } catch (const stt::WavError&) {
      ++rejected;
    }
  }
  std::printf("wav fuzz: %ld iterations, seed %u: %ld accepted, %ld rejected, no crash\n", iterations, seed, accepted, rejected);
  // Both outcomes must occur: mutations that leave a WAV valid are accepted, broken ones refused.
  if (accepted == 0 || rejected == 0) {
    std::fprintf(stderr, "wav fuzz: expected both accepted and rejected inputs\n");
    return 1;
  }
  return 0;
}
