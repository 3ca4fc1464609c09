// stt-gateway (cmake/whisper-patches.cmake, lazy-probs): at temperature 0
// nothing reads the probabilities of most text tokens, yet
// whisper_process_logits took expf() of all 51,865 tokens at every step of
// every beam (after the one pass its log-softmax needs). At temperature 0
// the samplers read: the timestamp tokens' probabilities (their sum and
// largest), the chosen token's (greedy: the most probable; beam search: the
// k highest logits). So only the timestamp tokens' are computed ahead, and a
// text token's where a sampler reads it, with the same expression. The
// temperature fallback (temperature > 0) draws from all of them and still
// computes all. Inserted into src/whisper.cpp ahead of
// whisper_process_logits; test/native/lazy_probs.cpp checks it against
// upstream's code.

// Token i's probability, with whisper_compute_probs' expression.
static inline float stt_prob_of(const std::vector<float> & logits, const std::vector<float> & logprobs, int i) {
    return logits[i] == -INFINITY ? 0.0f : expf(logprobs[i]);
}

// probs[from, n) as whisper_compute_probs computes them.
static void stt_compute_probs_from(const std::vector<float> & logits, int from, int n, const std::vector<float> & logprobs,
                                   std::vector<float> & probs) {
    for (int i = from; i < n; ++i) probs[i] = stt_prob_of(logits, logprobs, i);
}

// Token id's probability at temperature 0: computed ahead for a timestamp
// token, here for a text token, the same value either way.
static float stt_prob(const whisper_decoder & decoder, int token_beg, int id) {
    return id >= token_beg ? decoder.probs[id] : stt_prob_of(decoder.logits, decoder.logprobs, id);
}

// whisper_sample_token's greedy choice (the first token with the largest
// probability, with its probability and log-probability) without every text
// token's probability: a text token's is computed only where its
// log-probability is within 1/16 of the largest text token's. Any other's is
// below that token's probability by a factor under e^(-1/16) = 0.94, far more
// than expf's rounding, so it can neither be the largest nor tie with it.
static void stt_best_token(const whisper_decoder & decoder, int token_beg, int n_logits, whisper_token_data & result) {
    const auto & logits   = decoder.logits;
    const auto & logprobs = decoder.logprobs;

    float text_max = -INFINITY;
    for (int i = 0; i < token_beg; ++i) {
        if (logits[i] != -INFINITY && logprobs[i] > text_max) text_max = logprobs[i];
    }
    const float near = text_max - 0.0625f;

    for (int i = 0; i < n_logits; ++i) {
        if (i < token_beg && !(logits[i] != -INFINITY && logprobs[i] >= near)) continue;
        const float p = stt_prob(decoder, token_beg, i);
        if (result.p < p) {
            result.id   = i;
            result.p    = p;
            result.plog = logprobs[i];
        }
    }
}

