# Our one change to whisper.cpp v1.9.1, made to a copy of src/whisper.cpp in
# the build tree (the pinned tree stays as scripts/whisper-source.js checked
# it); the whisper library, and so the addon and the peer tools, compile the
# copy. Listed, with its id, in third_party/whisper.cpp.json under "patches";
# the copy defines stt_whisper_patches() returning that id, which the addon
# calls: an addon linked against an unpatched whisper.cpp does not link, and
# scripts/install.js rebuilds one that reports another id.
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
set(STT_WHISPER_PATCH_ID "clear-padded-kv-caches")

function(stt_patch_insert text_var anchor insertion)
  string(FIND "${${text_var}}" "${anchor}" at)
  if (at EQUAL -1)
    message(FATAL_ERROR "cmake/whisper-patches.cmake: a line it patches is not in whisper.cpp; review the patch for this whisper.cpp version:\n${anchor}")
  endif()
  string(REPLACE "${anchor}" "${insertion}${anchor}" patched "${${text_var}}")
  set(${text_var} "${patched}" PARENT_SCOPE)
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
  string(APPEND text "\n// stt-gateway (cmake/whisper-patches.cmake): which patches this copy carries.\nextern \"C\" const char * stt_whisper_patches(void) { return \"${STT_WHISPER_PATCH_ID}\"; }\n")
  # Written only when it changes, so a reconfigure does not rebuild whisper.cpp.
  if (EXISTS "${out_file}")
    file(READ "${out_file}" old)
  endif()
  if (NOT "${old}" STREQUAL "${text}")
    file(WRITE "${out_file}" "${text}")
  endif()
endfunction()
