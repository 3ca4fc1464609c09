// Checks the dft-twiddles patch (cmake/whisper-patches.cmake): whisper.cpp's
// dft() as patched (stt_whisper_dft, 25 points, four outputs at a time) must
// give the same bits as the upstream dft() copied below, with its table made
// as whisper.cpp makes it, on random frames, frames of one impulse and of
// silence, and loud ones. Built, like whisper.cpp, without FMA. Exit 0 when
// all match.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

extern "C" void stt_whisper_dft(const float * in, int n, float * out);

namespace {

constexpr int kCount = 400;  // SIN_COS_N_COUNT = WHISPER_N_FFT
float sin_vals[kCount], cos_vals[kCount];

// whisper_global_cache::fill_sin_cos_table, v1.9.1
void fill_sin_cos_table() {
    for (int i = 0; i < kCount; i++) {
        double theta = (2 * M_PI * i) / kCount;
        sin_vals[i] = sinf(theta);
        cos_vals[i] = cosf(theta);
    }
}

// dft() of whisper.cpp v1.9.1, unchanged but for the table's name
void upstream_dft(const float * in, int N, float * out) {
    const int sin_cos_step = kCount / N;

    for (int k = 0; k < N; k++) {
        float re = 0;
        float im = 0;

        for (int n = 0; n < N; n++) {
            int idx = (k * n * sin_cos_step) % (kCount); // t = 2*M_PI*k*n/N
            re += in[n]*cos_vals[idx]; // cos(t)
            im -= in[n]*sin_vals[idx]; // sin(t)
        }

        out[k*2 + 0] = re;
        out[k*2 + 1] = im;
    }
}

}  // namespace

int main() {
    fill_sin_cos_table();
    constexpr int N = 25;
    std::mt19937 random(20261127);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<std::vector<float>> frames;
    for (int f = 0; f < 2000; ++f) {
        std::vector<float> frame(N);
        const float gain = f % 3 == 0 ? 1e-4f : f % 3 == 1 ? 1.0f : 3e4f;
        for (float & x : frame) x = gain * normal(random);
        frames.push_back(frame);
    }
    frames.push_back(std::vector<float>(N, 0.0f));
    for (int at = 0; at < N; ++at) {
        std::vector<float> impulse(N, 0.0f);
        impulse[at] = 1.0f;
        frames.push_back(impulse);
    }
    int failures = 0;
    for (const std::vector<float> & frame : frames) {
        float expected[2 * N], got[2 * N];
        upstream_dft(frame.data(), N, expected);
        stt_whisper_dft(frame.data(), N, got);
        if (std::memcmp(expected, got, sizeof(expected)) != 0) {
            if (failures < 5) std::printf("a frame's DFT differs (first value %a against %a)\n", got[0], expected[0]);
            ++failures;
        }
    }
    if (failures) std::printf("dft twiddles: %d of %zu frames differ\n", failures, frames.size());
    else std::printf("dft twiddles: all equal (%zu frames)\n", frames.size());
    return failures ? 1 : 0;
}
