# Our changes to whisper.cpp v1.9.1, each made to a copy of the file it
# changes in the build tree (the pinned tree stays as scripts/whisper-source.js
# checked it); the whisper and ggml-cpu libraries, and so the addon and the
# peer tools, compile the copies. Listed, with their ids, in
# third_party/whisper.cpp.json under "patches"; the whisper.cpp copy defines
# stt_whisper_patches() returning the ids, which the addon calls: an addon
# linked against an unpatched whisper.cpp does not link, and
# scripts/install.js rebuilds one that reports other ids.
#
# 1. clear-padded-kv-caches (src/whisper.cpp).
#
# audio_ctx and flash attention: the encoder's self-attention (kv_pad) and the
# decoder's cross-attention (kv_cross) read their K/V padded to 256 positions
# with no mask, and the rows past audio_ctx are never written by a run with
# that audio_ctx: they hold zeros in a fresh state, but whatever a run with
# another audio_ctx (another layer layout) left there in a used one. A server
# whose requests get different windows then answered the same clip
# differently after different clips. So both caches are cleared whenever the
# state's audio_ctx changes, and language detection, which encodes with the
# state's audio_ctx before whisper_full sets this request's, encodes in the
# full window as in a fresh state.
#
# 2. yielding-barrier (ggml/src/ggml-cpu/ggml-cpu.c): ggml's graph threads
# meet at a barrier after every node and spin there until the last one
# arrives. When another process holds a core, the thread it displaced is
# descheduled for a whole time slice while the others spin on theirs, so a
# 2-thread job on a 2-core host shared with one busy process took 3.1x its
# time (faster-whisper 1.37x). After STT_BARRIER_SPINS rounds of spinning
# (a few microseconds: longer than a barrier takes when every thread runs)
# a waiting thread calls sched_yield(), which gives its core to whoever
# is runnable there, the late thread included. Alone on the host, barriers
# end within the spin and nothing changes. Could go upstream as an option of
# ggml_threadpool_params (ggml's poll level governs only the wait for a graph,
# not its barriers).
# Changing the count changes what the patch does: give the patch a new id then.
set(STT_BARRIER_SPINS 2048)
#
# 3. beam-top-k (src/whisper.cpp): at temperature 0, whisper.cpp's beam
# search draws each beam's k candidates at random from the token
# distribution (std::discrete_distribution over all 51,865 tokens, built anew
# for every beam at every step) instead of taking the k most likely, as
# OpenAI's and CTranslate2's beam searches do. So its "beam 5" could drop the
# best continuation, and depended on the state's random-number history. The
# patch takes the top k, already sorted by the function, when the window is
# decoded at temperature 0; the temperature fallback (above 0) still samples.
# Could go upstream as a fix.
set(STT_WHISPER_PATCH_ID "clear-padded-kv-caches,yielding-barrier,beam-top-k")

function(stt_patch_insert text_var anchor insertion)
  string(FIND "${${text_var}}" "${anchor}" at)
  if (at EQUAL -1)
    message(FATAL_ERROR "cmake/whisper-patches.cmake: a line it patches is not in whisper.cpp; review the patch for this whisper.cpp version:\n${anchor}")
  endif()
  string(REPLACE "${anchor}" "${insertion}${anchor}" patched "${${text_var}}")
  set(${text_var} "${patched}" PARENT_SCOPE)
endfunction()

# Replaces `anchor`, which must occur exactly once, by `replacement`.
function(stt_patch_replace text_var anchor replacement)
  string(FIND "${${text_var}}" "${anchor}" first)
  string(FIND "${${text_var}}" "${anchor}" last REVERSE)
  if (first EQUAL -1 OR NOT first EQUAL last)
    message(FATAL_ERROR "cmake/whisper-patches.cmake: a text it replaces is not in whisper.cpp exactly once; review the patch for this whisper.cpp version:\n${anchor}")
  endif()
  string(REPLACE "${anchor}" "${replacement}" patched "${${text_var}}")
  set(${text_var} "${patched}" PARENT_SCOPE)
endfunction()

function(stt_write_if_changed out_file text)
  # Written only when it changes, so a reconfigure does not rebuild whisper.cpp.
  if (EXISTS "${out_file}")
    file(READ "${out_file}" old)
  endif()
  if (NOT "${old}" STREQUAL "${text}")
    file(WRITE "${out_file}" "${text}")
  endif()
endfunction()

function(stt_patch_ggml_cpu whisper_dir out_file)
  set(source "${whisper_dir}/ggml/src/ggml-cpu/ggml-cpu.c")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${source}")
  file(READ "${source}" text)
  set(spin "    while (atomic_load_explicit(&tp->n_barrier_passed, memory_order_relaxed) == n_passed) {\n        ggml_thread_cpu_relax();\n    }\n")
  string(FIND "${text}" "${spin}" at)
  if (at EQUAL -1)
    message(FATAL_ERROR "cmake/whisper-patches.cmake: ggml_barrier's spin loop is not in ggml-cpu.c; review the yielding-barrier patch for this whisper.cpp version")
  endif()
  string(REPLACE "${spin}" "    // stt-gateway (cmake/whisper-patches.cmake, yielding-barrier): spin, then yield the core.\n    for (int spins = 0; atomic_load_explicit(&tp->n_barrier_passed, memory_order_relaxed) == n_passed;) {\n        if (spins < ${STT_BARRIER_SPINS}) {\n            ++spins;\n            ggml_thread_cpu_relax();\n        } else {\n            sched_yield();\n        }\n    }\n" text "${text}")
  # sched_yield: ggml-cpu.c includes <sched.h> on POSIX and defines its own on Windows.
  stt_write_if_changed("${out_file}" "${text}")
endfunction()

function(stt_patch_whisper whisper_dir out_file)
  set(source "${whisper_dir}/src/whisper.cpp")
  # Patched again whenever the source changes, not only at the first configure.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${source}")
  file(READ "${source}" text)
  set(clear "ggml_backend_buffer_clear(state->kv_cross.buffer, 0);\n        ggml_backend_buffer_clear(state->kv_pad.buffer, 0);\n")
  stt_patch_insert(text
    "        const auto lang_id = whisper_lang_auto_detect_with_state(ctx, state, 0, params.n_threads, probs.data());\n"
    "        // stt-gateway (cmake/whisper-patches.cmake): detect in the full window, as a fresh state does.\n        if (state->exp_n_audio_ctx != 0) {\n        ${clear}        state->exp_n_audio_ctx = 0;\n        }\n")
  stt_patch_insert(text
    "    state->exp_n_audio_ctx = params.audio_ctx;\n"
    "    // stt-gateway (cmake/whisper-patches.cmake): rows past audio_ctx in the\n    // padded caches must not carry an earlier run's values.\n    if (state->exp_n_audio_ctx != params.audio_ctx) {\n        ${clear}    }\n")
  stt_patch_replace(text
    "            whisper_decoder & decoder,\n                        int   k) {\n"
    "            whisper_decoder & decoder,\n                        int   k,\n                       bool   stt_top_k) {\n")
  stt_patch_replace(text
    "    std::discrete_distribution<> dist(probs.begin(), probs.end());\n\n    for (int i = 0; i < k; ++i) {\n        const auto id = dist(decoder.rng);\n"
    "    // stt-gateway (cmake/whisper-patches.cmake, beam-top-k): at temperature 0 the k most likely, no draw.\n    std::discrete_distribution<> dist = stt_top_k ? std::discrete_distribution<>() : std::discrete_distribution<>(probs.begin(), probs.end());\n\n    for (int i = 0; i < k; ++i) {\n        const auto id = stt_top_k ? logits_id[i].second : dist(decoder.rng);\n")
  stt_patch_replace(text
    "whisper_sample_token_topk(*ctx, decoder, params.beam_search.beam_size);"
    "whisper_sample_token_topk(*ctx, decoder, params.beam_search.beam_size, t_cur < 1e-6f);")
  string(APPEND text "\n// stt-gateway (cmake/whisper-patches.cmake): which patches this copy carries.\nextern \"C\" const char * stt_whisper_patches(void) { return \"${STT_WHISPER_PATCH_ID}\"; }\n")
  stt_write_if_changed("${out_file}" "${text}")
endfunction()
