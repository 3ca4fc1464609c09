# Our one change to whisper.cpp v1.9.1, made to a copy of src/whisper.cpp in
# the build tree (the pinned tree stays as scripts/whisper-source.js checked
# it); the whisper library, and so the addon and the peer tools, compile the
# copy. Listed in third_party/whisper.cpp.json under "patches".
#
# audio_ctx and flash attention: the encoder's self-attention (kv_pad) and the
# decoder's cross-attention (kv_cross) read their K/V padded to 256 positions
# with no mask, and the rows past audio_ctx are never written by a run with
# that audio_ctx: they hold zeros in a fresh state, but whatever a run with a
# larger audio_ctx (or another layer layout) left there in a used one. A
# server whose requests get different windows then answered the same clip
# differently after different clips (1 of 12 clips here, and whisper-cli with
# two files and one -ac shows it too). Clearing both caches when audio_ctx
# changes makes every run see what a fresh state sees.
function(stt_patch_whisper whisper_dir out_file)
  file(READ ${whisper_dir}/src/whisper.cpp text)
  set(anchor "    state->exp_n_audio_ctx = params.audio_ctx;\n")
  string(FIND "${text}" "${anchor}" at)
  if (at EQUAL -1)
    message(FATAL_ERROR "cmake/whisper-patches.cmake: the line it patches is not in ${whisper_dir}/src/whisper.cpp; review the patch for this whisper.cpp version")
  endif()
  set(fix "    // stt-gateway (cmake/whisper-patches.cmake): rows past audio_ctx in the\n    // padded caches must not carry an earlier run's values.\n    if (state->exp_n_audio_ctx != params.audio_ctx) {\n        ggml_backend_buffer_clear(state->kv_cross.buffer, 0);\n        ggml_backend_buffer_clear(state->kv_pad.buffer, 0);\n    }\n")
  string(REPLACE "${anchor}" "${fix}${anchor}" text "${text}")
  # Written only when it changes, so a reconfigure does not rebuild whisper.cpp.
  if (EXISTS ${out_file})
    file(READ ${out_file} old)
  endif()
  if (NOT "${old}" STREQUAL "${text}")
    file(WRITE ${out_file} "${text}")
  endif()
endfunction()
