// Checks the lazy-probs patch (cmake/whisper-patches.cmake): at temperature
// 0, the greedy choice (stt_best_token) and the probabilities the samplers
// read (stt_prob), as cmake/patches/lazy-probs.cpp computes them (included
// here as it is inserted), must be the bits of upstream whisper.cpp's, whose
// code is copied below verbatim from v1.9.1: whisper_compute_logprobs,
// whisper_compute_probs and whisper_sample_token's greedy loop. Many random
// logit vectors of Whisper's vocabulary: spread as a model's, with
// suppressed (-inf) tokens, with timestamps ahead of the text, with
// near-ties and exact ties at the top (a token within 1/16 of the largest
// log-probability, and two equal largest). Exit 0 when all match.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "whisper.h"

// The fields of whisper.cpp's decoder that the patch reads.
struct whisper_decoder {
    std::vector<float> logits;
    std::vector<float> logprobs;
    std::vector<float> probs;
};

#include "../../cmake/patches/lazy-probs.cpp"

namespace upstream {

// whisper.cpp v1.9.1, src/whisper.cpp, verbatim.
static void whisper_compute_logprobs(
                const std::vector<float> & logits,
                              const int    n_logits,
                      std::vector<float> & logprobs) {
    const float logit_max = *std::max_element(logits.begin(), logits.end());
    float logsumexp = 0.0f;
    for (int i = 0; i < n_logits; ++i) {
        if (logits[i] > -INFINITY) {
            logsumexp += expf(logits[i] - logit_max);
        }
    }
    logsumexp = logf(logsumexp) + logit_max;

    for (int i = 0; i < n_logits; ++i) {
        if (logits[i] > -INFINITY) {
            logprobs[i] = logits[i] - logsumexp;
        } else {
            logprobs[i] = -INFINITY;
        }
    }
}

static void whisper_compute_probs(
    const std::vector<float> & logits,
                  const int    n_logits,
    const std::vector<float> & logprobs,
          std::vector<float> & probs)     {
    for (int i = 0; i < n_logits; ++i) {
        if (logits[i] == -INFINITY) {
            probs[i] = 0.0f;
        } else {
            probs[i] = expf(logprobs[i]);
        }
    }
}

// whisper_sample_token, the `best` branch.
static void best_token(const std::vector<float> & probs, const std::vector<float> & logprobs, int n_logits, whisper_token_data & result) {
    for (int i = 0; i < n_logits; ++i) {
        if (result.p < probs[i]) {
            result.id   = i;
            result.p    = probs[i];
            result.plog = logprobs[i];
        }
    }
}

}  // namespace upstream

namespace {

constexpr int kVocab = 51865;    // Whisper's multilingual vocabulary
constexpr int kTokenBeg = 50364; // its first timestamp token

bool same(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

}  // namespace

int main() {
    std::mt19937 rng(20261127);
    std::normal_distribution<float> normal(0.0f, 4.0f);
    std::uniform_int_distribution<int> token(0, kVocab - 1), text(0, kTokenBeg - 1);
    int failures = 0;
    const int trials = 400;
    for (int t = 0; t < trials; ++t) {
        whisper_decoder d;
        d.logits.resize(kVocab);
        d.logprobs.resize(kVocab);
        for (float & x : d.logits) x = normal(rng);
        // suppressed tokens, as the logit filters leave them
        for (int i = 0; i < 2000; ++i) d.logits[token(rng)] = -INFINITY;
        const int kind = t % 5;
        if (kind == 1) {
            // the timestamps ahead of every text token
            for (int i = kTokenBeg; i < kVocab; ++i) d.logits[i] = 30.0f + normal(rng);
        } else if (kind == 2) {
            // a near-tie at the top, inside the 1/16 margin
            const int a = text(rng), b = text(rng);
            d.logits[a] = 25.0f;
            d.logits[b] = 25.0f - 1e-6f * static_cast<float>(t);
        } else if (kind == 3) {
            // an exact tie at the top: the first must win
            const int a = text(rng), b = text(rng);
            d.logits[a] = d.logits[b] = 25.0f;
        } else if (kind == 4) {
            // every text token suppressed, as after a timestamp pair's rule
            for (int i = 0; i < kTokenBeg; ++i) d.logits[i] = -INFINITY;
        }
        upstream::whisper_compute_logprobs(d.logits, kVocab, d.logprobs);
        std::vector<float> eager(kVocab);
        upstream::whisper_compute_probs(d.logits, kVocab, d.logprobs, eager);

        // the patched step: timestamps ahead, the rest stale (NaN here, so a stray read shows)
        d.probs.assign(kVocab, NAN);
        stt_compute_probs_from(d.logits, kTokenBeg, kVocab, d.logprobs, d.probs);
        whisper_token_data ours = {0, 0, 0.0f, 0.0f, 0.0f, 0.0f, -1, -1, -1, 0.0f};
        whisper_token_data theirs = ours;
        stt_best_token(d, kTokenBeg, kVocab, ours);
        upstream::best_token(eager, d.logprobs, kVocab, theirs);
        if (ours.id != theirs.id || !same(ours.p, theirs.p) || !same(ours.plog, theirs.plog)) {
            std::printf("lazy probs: trial %d: greedy chose %d (p %.9g), upstream %d (p %.9g)\n", t, ours.id, ours.p, theirs.id, theirs.p);
            ++failures;
        }
        for (int i = 0; i < kVocab; ++i) {
            if (!same(stt_prob(d, kTokenBeg, i), eager[i])) {
                std::printf("lazy probs: trial %d: token %d's probability %.9g, upstream %.9g\n", t, i, stt_prob(d, kTokenBeg, i), eager[i]);
                ++failures;
                break;
            }
        }
    }
    if (failures > 0) return 1;
    std::printf("lazy probs: all equal (%d logit vectors)\n", trials);
    return 0;
}
