// Bounded fuzz run of the compressed-audio decoders (MP3 and FLAC, through
// audio_decoder.cpp, with its sniffing and streaming resampler) under
// AddressSanitizer and UBSan. Mutates valid
// seed files (native/audio/fuzz/seeds/) anywhere in the file, truncates them, and
// writes absurd values into their first bytes (where the headers are), with a
// seeded generator; any over-read, leak or undefined behaviour aborts.
// Usage: audio_fuzz <iterations> <seed> <seeds dir>
#include <dirent.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "audio_decoder.h"
#include "resampler.h"

namespace {

std::vector<std::vector<uint8_t>> read_seeds(const std::string& dir, std::vector<std::string>& names) {
  std::vector<std::vector<uint8_t>> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::ifstream f(dir + "/" + name, std::ios::binary);
    out.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    names.push_back(name);
  }
  closedir(d);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::stol(argv[1]) : 3000;
  const unsigned seed = argc > 2 ? static_cast<unsigned>(std::stoul(argv[2])) : 1;
  const std::string dir = argc > 3 ? argv[3] : "native/audio/fuzz/seeds";
  constexpr double kMaxSeconds = 30;  // bounds what a mutated header can make a decoder produce
  std::vector<std::string> names;
  const auto seeds = read_seeds(dir, names);
  if (seeds.size() < 5) {
    std::fprintf(stderr, "audio fuzz: expected the MP3 and FLAC seeds in %s, found %zu files\n", dir.c_str(), seeds.size());
    return 1;
  }
  // The streaming resampler the compressed formats use must give, sample for
  // sample, what the whole-buffer one gives, however the input is cut up
  // (44057 Hz: a ratio with no small period, the kernel-table path).
  {
    std::mt19937 rng(seed);
    for (const uint32_t rate : {8000u, 11025u, 22050u, 44100u, 44057u, 48000u, 96000u, 192000u, 16000u}) {
      std::vector<float> in(rate / 3 + rng() % 5000);
      for (float& v : in) v = static_cast<float>(static_cast<int>(rng() % 20001) - 10000) / 10000.0f;
      const std::vector<float> whole = stt::Resampler::resample(in, rate, 16000);
      stt::StreamingResampler streaming(rate, 16000);
      for (size_t at = 0; at < in.size();) {
        const size_t n = std::min<size_t>(in.size() - at, 1 + rng() % 3000);
        streaming.push(in.data() + at, n);
        at += n;
      }
      const std::vector<float> pieces = streaming.finish();
      if (pieces != whole) {
        std::fprintf(stderr, "audio fuzz: streaming resampling from %u Hz differs from whole-buffer (%zu against %zu samples)\n", rate, pieces.size(), whole.size());
        return 1;
      }
    }
  }
  // A decoder that refused everything would pass the fuzz below: every seed, unmutated, must decode.
  for (size_t i = 0; i < seeds.size(); ++i) {
    try {
      stt::DecodedAudio a = stt::decode_audio(seeds[i].data(), seeds[i].size(), kMaxSeconds);
      if (a.pcm.empty()) throw stt::WavError("corrupt_audio", "empty");
    } catch (const stt::WavError& e) {
      std::fprintf(stderr, "audio fuzz: valid seed %s was refused: %s (%s)\n", names[i].c_str(), e.what(), e.code());
      return 1;
    }
  }
  std::mt19937 rng(seed);
  long accepted = 0, rejected = 0;
  for (long it = 0; it < iterations; ++it) {
    std::vector<uint8_t> buf = seeds[rng() % seeds.size()];
    const int mutations = 1 + static_cast<int>(rng() % 8);
    for (int m = 0; m < mutations && buf.size() >= 8; ++m) {
      const size_t header = std::min<size_t>(buf.size(), 128);
      switch (rng() % 7) {
        case 0: buf[rng() % header] = static_cast<uint8_t>(rng()); break;                          // a header byte
        case 1: { const size_t at = rng() % (header - 3); const uint32_t v = rng(); std::memcpy(&buf[at], &v, 4); break; }
        case 2: { const size_t at = rng() % (header - 3); const uint32_t v = 0xFFFFFFFFu - (rng() % 3); std::memcpy(&buf[at], &v, 4); break; }
        case 3: buf.resize(rng() % (buf.size() + 1)); break;                                      // truncated anywhere
        case 4: buf[rng() % buf.size()] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;         // a bit anywhere
        case 5: {  // a run of garbage anywhere
          const size_t at = rng() % buf.size();
          const size_t n = std::min<size_t>(buf.size() - at, 1 + rng() % 64);
          for (size_t k = 0; k < n; ++k) buf[at + k] = static_cast<uint8_t>(rng());
          break;
        }
        default: buf.insert(buf.begin() + static_cast<long>(rng() % (buf.size() + 1)), static_cast<uint8_t>(rng())); break;
      }
    }
    try {
      stt::DecodedAudio a = stt::decode_audio(buf.data(), buf.size(), kMaxSeconds);
      if (a.pcm.size() > static_cast<size_t>(kMaxSeconds * 16000) + 16000) {
        std::fprintf(stderr, "audio fuzz: %zu samples decoded past the %.0f-s limit\n", a.pcm.size(), kMaxSeconds);
        return 1;
      }
      ++accepted;
    } catch (const stt::WavError&) {
      ++rejected;
    }
  }
  std::printf("audio fuzz: %ld iterations over %zu seeds (seed %u): %ld decoded, %ld refused\n", iterations, seeds.size(), seed, accepted, rejected);
  return 0;
}
