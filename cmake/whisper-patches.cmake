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
#
# 4. shared-q0-tiles (ggml/src/ggml-cpu/llamafile/sgemm.cpp, and ggml-cpu.c
# around its call): tinyBLAS's q8_0 product (tinyBLAS_Q0_AVX, the encoder's
# and the beam decoder's weight products) gives each thread a fixed 1/nth of
# the tiles. When another process holds a core, the thread it displaced
# still owes its half, and the graph waits for it at the next barrier: with
# one busy process beside it a 2-thread job took 1.81x its time, and no less
# than with one thread (benchmarks/studies/contention.ts). The patched call
# takes chunks of tiles from the threadpool's shared counter instead (ggml's
# own mul_mat and tinyBLAS's float product already do), STT_Q0_CHUNKS_PER_THREAD
# per thread per product, so the thread that runs does the work of the one
# that waits. Each tile is computed exactly as before, by whichever thread:
# the results are bit for bit the same. Used only where ggml-cpu.c has just
# reset the counter behind a barrier and makes one product per op; elsewhere
# the fixed split stays. Could go upstream (the float product has it).
#
# 5. q0-one-pass (the same copy of sgemm.cpp): tinyBLAS_Q0_AVX covers 4
# columns of a product with 4x2 tiles (16 vector registers, AVX2) or 4x4
# tiles (32, AVX-512), then makes a second pass over all the weights for a
# fifth column. The beam decoder's products have 5 columns (one token per
# beam), so every step read each decoder weight and the 51,865-row output
# matrix twice. The patch computes all the columns of a 4-row tile before the
# next (2 or 4 columns at a time, then the rest), so the tile's weights are
# read once, from cache.
# Each output is computed by the same kernel and in the same order as
# before: the results are bit for bit the same. Could go upstream.
set(STT_Q0_CHUNKS_PER_THREAD 8)
#
# 6. fa-wide-tiles (ggml/src/ggml-cpu/ops.cpp, and ggml-cpu.c's scratch
# size): the encoder's flash attention (1,500 queries per head) works in
# tiles of 64 queries, and for every tile converts all of the head's f16
# keys and values to f32 (the keys transposed) before its two small matrix
# products, so each key and value was converted 24 times per layer. Tiles of
# STT_FA_TILE_Q queries convert them half as often, into scratch that still
# fits a 256-KB L2 (160 KB a thread; 256 and 512 gained no more here); the
# values go through ggml-cpu's vectorised converter (ggml_cpu_fp16_to_fp32)
# instead of ggml-base's scalar row loop. Each query row is computed by the
# same kernels in the same order whatever the tile's height, so the results
# are bit for bit the same. Which path a pass takes does not change: 64
# queries or more go tiled as before (a decoder pass over a prompt of 64-127
# tokens fills part of one tile), fewer (a decoder step) take the one-row
# path. Could go upstream (the height is a #define there).
# Changing the height changes what the patch does: give the patch a new id then.
set(STT_FA_TILE_Q 128)
#
# 7. resume-point (src/whisper.cpp): a run of whisper_full over a long
# recording carries three things from one 30-s window to the next: where the
# window starts (seek), the text decoded so far (the prompt of the next
# window) and, with token timestamps, the last timestamp reached. A job that
# stops (a restart, a replica killed) and starts again from offset_ms with
# the same prompt and clock decodes the rest exactly as the uninterrupted run
# would, so a long recording's transcript does not depend on when its job was
# stopped (src/jobs/runner.ts). The state records the window's seek before
# encoder_begin_callback; stt_whisper_checkpoint() reads the three at that
# callback, and stt_whisper_resume() sets them for the next whisper_full,
# which then keeps them where it would reset them, and clears the prompt
# before a short last window as the uninterrupted run does (the rule reads
# "a window after the first"). The temperature fallback's decoders sample
# with random-number generators that run on from window to window: their
# states are part of the checkpoint too. Nothing changes for a run that is
# not resumed.
#
# 8. fresh-sampling-seed (src/whisper.cpp): whisper_full seeds decoders 1..n
# anew at every run, decoder 0 only when the state is created. With pooled
# states, the fallback's sampling (decoder 0 samples at t > 0 too) went on
# from whatever the state decoded before, so a clip with a fallback window
# could be answered differently depending on the requests before it. Decoder
# 0 is seeded anew too, as a fresh state is (whisper-cli's single run).
#
# 9. fa-rows (ggml/src/ggml-cpu/ops.cpp, the code in cmake/patches/fa-rows.cpp):
# the decoder's cross-attention, a few query rows (one per beam) over the
# encoder's 1,500 keys, took ggml's one-row path: each key on its own, a
# scalar expf, and an f16 accumulator converted to f32 and back at every
# key; a 5-beam step converted the same f16 keys and values once per beam.
# On AVX-512 the patched path converts a block of 16 keys and values once
# for all the rows of a head, scores 16 keys in one vector, takes their
# softmax weights with one vector exp and accumulates in f32; on AVX2 with
# FMA and F16C the same in blocks of 8 (since 2026-11-29: on an AVX2-only
# EPYC a beam-5 run spent about half its decoder steps in the one-row path
# and its scalar expf, perf). It computes the
# same attention with other rounding (f32 where the one-row path rounds to
# f16), so it is checked against a double-precision attention
# (test/native/fa_rows.cpp) and by the eval's WER; results are not bit for
# bit those of the one-row path. The one-row path keeps what it was faster
# at or what this does not take: one query row (a greedy step), a mask (the
# self-attention, whose masked keys it skips one by one), sinks, other
# types, ALiBi, a soft cap, heads not a multiple of 16 or wider than 128,
# ggml's reference mode (heads: a multiple of 8 wide is enough on AVX2).
# Could go upstream as the one-row path's AVX-512 and AVX2 cases. Its AVX2
# branch is listed as its own id, fa-rows-avx2, as it changed the results
# on AVX2 machines: an addon or a checkpoint from before is not taken for
# this one.
#
# 10. fa-tile-loops (ggml/src/ggml-cpu/ops.cpp, the code in
# cmake/patches/fa-tile-loops.cpp): two scalar loops in the encoder's tiled
# flash attention took a fifth of its time (perf, AVX-512): the maximum of
# each row of scores, one value at a time in a dependent chain, and the
# packing of each tile's keys transposed to f32, one value at a time through
# ggml's 256-KB f16 table. On AVX-512 the maximum is taken 16 lanes at a
# time and the keys are packed 16 at a time (a gather of two neighbouring
# dimensions, both converted at once); on AVX2 8 at a time (8 dimensions of 8
# keys converted, then transposed in registers: the packing and the maximum
# were a third of the tiled attention's time on an AVX2-only EPYC, perf).
# The values are the same, so the
# results are bit for bit the same (test/native/fa_tile_loops.cpp against
# ggml's loops, test/native/fa_tiles.cpp through the attention). Could go
# upstream.
#
# 11. gelu-vector-table (ggml/src/ggml-cpu/ops.cpp, the code in
# cmake/patches/gelu-vector-table.cpp): ggml's GELU looks each value up in
# its f16 table one at a time (3 % of a greedy window: the encoder applies it
# to 1,500 x 2,048 values per layer). On AVX-512 the same conversion, table
# and cut-offs take 16 values at a time (a gather), on AVX2 8, so the results are bit
# for bit the same (test/native/gelu_table.cpp). Could go upstream.
#
# 12. dft-twiddles (src/whisper.cpp, the code in cmake/patches/dft-twiddles.cpp):
# the log-mel spectrogram took 4-5 % of a greedy window, most of it in the
# 25-point DFTs its FFT ends in (400 = 16 x 25), each product finding its
# twiddle through a multiply and a modulo. The 25-point twiddles are laid out
# once and four outputs are summed at a time (SSE2; not where the compiler may
# use FMA, which could fuse the upstream loop), each in the same order with
# the same roundings, so the results are bit for bit the same
# (test/native/dft_twiddles.cpp against a copy of the upstream dft()).
# Could go upstream.
#
# 13. fa-tile-gemm (ggml/src/ggml-cpu/ops.cpp, the code in
# cmake/patches/fa-tile-gemm.cpp): the tiled flash attention's two products
# (scores = Q K, output += P V) ran at about half the multiply-add rate on
# AVX-512: ggml's simd_gemm keeps a 4 x 64 block of C in registers, but the
# compiler folds B's loads into the multiply-adds, so each of the four rows
# loads B again. On AVX-512 the patched product holds B in registers and
# takes six rows per block. Each element is the same chain of fused
# multiply-adds in the same order, so the results are bit for bit the same
# (test/native/fa_tile_gemm.cpp, against the pinned simd-gemm.h). Could go
# upstream as simd_gemm's AVX-512 kernel.
#
# 14. lazy-probs (src/whisper.cpp, the code in cmake/patches/lazy-probs.cpp):
# every step of every beam took expf() of all 51,865 logits twice: once for
# the log-softmax and again for the probabilities, of which at temperature 0
# the samplers read only the timestamp tokens' and the chosen token's. At
# temperature 0 the probabilities are computed where they are read (the
# timestamp tokens' ahead, a text token's when a sampler reads it; greedy
# search computes them only for text tokens within 1/16 of the largest
# log-probability, and no other can be the most probable), with the same
# expression, so the tokens and their probabilities are bit for bit the same
# (test/native/lazy_probs.cpp, against upstream's code). The temperature
# fallback still computes all. Could go upstream.
#
# 15. q0-offset-dot (ggml/src/ggml-cpu/llamafile/sgemm.cpp, the code in
# cmake/patches/q0-offset-dot.cpp): vpdpbusd multiplies unsigned bytes by
# signed ones, so tinyBLAS_Q0_AVX moves a's sign onto b before each block's
# dot product: two sign instructions per row and column of a tile, in the
# encoder's and the beam decoder's q8_0 products. With VNNI the patched tiles
# (gemm4xN's and q0-one-pass's stt_tile4xN) feed a + 128 (a's top bit
# flipped) as the unsigned operand and start each lane at -128 * sum(b): the
# same 32-bit sums, with the flip made once per row and the start once per
# column of a tile. They differ from upstream's only where b holds -128,
# which ggml's q8_0 quantizer never writes from finite activations, so the
# results are bit for bit the same (test/native/q0_offset_dot.cpp, every pair of byte values). The
# tile took 6-8 % less time alone. Could go upstream.
#
# 16. q0-prefetch-rows (the same copy of sgemm.cpp): a tile of q0-one-pass's
# stt_gemm4_all_columns reads its 4 rows of weights interleaved, 34 bytes of
# each at a time, and the hardware prefetcher did not keep up: on the beam
# decoder's 51,865-row output matrix (28 MB in q8_0, read once per step)
# one thread ran at about 4 GB/s. The loop asks for the next tile's rows
# (_mm_prefetch) as it starts a tile: that product took 0.4x its time in a
# one-thread microbenchmark. A prefetch changes no result. Could go upstream.
#
# 17. fa-fixed-key-chunks (ggml/src/ggml-cpu/ops.cpp, and ggml-cpu.c's
# scratch size): flash attention for one query over 512 keys or more (a
# greedy step's cross-attention over the 1,500 encoder positions) splits the
# keys into one chunk per thread and then combines the chunks' partial sums,
# so its last bits, and now and then a token, changed with the thread count.
# The patch always makes STT_FA_KEY_CHUNKS chunks and deals them out to the
# threads (thread i takes chunks i, i + n, ...); they are combined in the same
# order as before. The results are then the same at any thread count
# (test/real/real-weights.test.ts: tokens and log-probabilities at 1 to 4
# threads, in the full window), which decoder-threads (18) relies on. Hosts
# with more threads than chunks leave the rest idle in this small operator.
# Could go upstream.
# Changing the count changes the results: give the patch a new id then.
set(STT_FA_KEY_CHUNKS 16)
#
# 18. decoder-threads (src/whisper.cpp): whisper_full decodes with as many
# threads as it encodes. The decoder's graphs are small (a greedy step, about
# 3 ms, is a few dozen operations per layer, a barrier after every one), so
# when another process holds one of two cores, the thread it displaces holds
# the other up many times per token; the encoder's large products hand
# out their chunks from a shared counter and lose far less. The patch lets a
# run decode with fewer threads than it encodes with
# (stt_whisper_set_decoder_threads on the state; 0, the default, keeps
# n_threads). With fa-fixed-key-chunks every output is computed the same way
# whatever the thread count, so the results are bit for bit the same
# (test/real/real-weights.test.ts). Could go upstream as a field of
# whisper_full_params.
#
# 19. fa-row-prefetch (ggml/src/ggml-cpu/ops.cpp): the one-row flash
# attention (a greedy step's cross-attention: one query over the 1,500
# encoder positions, every head of every layer) reads each key's row of K
# and of V, 128 bytes at a stride of the whole cache row, one key after the
# other, each step waiting on the last (its running maximum). On an AVX2-only
# EPYC (Zen 3) perf put a fifth of a greedy window there, nearly all of it on
# the loads of V. The loop asks for the rows STT_FA_PREFETCH_KEYS keys ahead
# (__builtin_prefetch, GNU compilers) before it scores a key: with the AVX2
# branches of 10 and 11, greedy decoding took 0.64x its time there and beam
# 5 0.63x (docs/performance.md). A prefetch changes no result;
# benchmarks/studies/patch-ab.sh checks whole runs against the build before
# (every token and its probability). Could go upstream.
set(STT_FA_PREFETCH_KEYS 8)
#
# 20. q0-row-panels (the same copy of sgemm.cpp, the code in
# cmake/patches/q0-row-panels.cpp): on AVX2 without VNNI, the encoder's q8_0
# products (1,500 columns) were nearly two thirds of its time (perf on an
# AVX2-only EPYC), and llvm-mca (znver3) puts gemm4xN's tile at the limit of
# the vector pipes: each 32-byte dot product takes three instructions to
# multiply and sum (sign, vpmaddubsw, vpmaddwd) and three more to convert,
# scale and add its 8 lanes in floats. Products of 16 columns or more now
# take 8-row panels: a job lays out 8 rows of weights once, with a row in
# each lane, broadcasts each column's 4 bytes to all rows, and keeps each
# block's sums whole in 32-bit integers, so a block of 8 rows is converted
# and scaled once (docs/performance.md has the measured times). The integer
# sums and the scales' products are exact and each block is added with one
# rounding, where upstream rounds each of 8 lanes and then adds them: the
# results differ from upstream's in their last bits, so the check
# (test/native/q0_row_panels.cpp) compares them bit for bit with a scalar
# copy of this arithmetic and bounds them against exact arithmetic, and the
# eval's texts are compared with the build before. Each output is computed by
# one thread in the same order whatever the thread count, so results stay
# the same at any thread count (fa-fixed-key-chunks, decoder-threads); a
# column's bits now depend on whether its product has 16 columns or more.
# Products of fewer columns (the decoder's) keep the tiles above; AVX-VNNI
# machines without AVX-512 keep q0-offset-dot's, AVX-512 ones with VNNI take
# 16-row panels (23), and AVX-512 ones without VNNI upstream's 4x4 tiles (not
# measured there). Could go upstream as an AVX2 q8_0 kernel. The tile's
# loop takes two 4-byte groups per iteration with each group's weights held
# in registers (an empty asm that GNU compilers must keep them for): left to
# itself GCC unrolled all eight groups, spilled the partial sums to the stack
# (53 spills in stt_gemm_panels) and folded the weights' load into every
# column's sign instruction; the integer sums, and so every result, are the
# same bits either way.
#
# 21. fa-rows-avx2 (cmake/patches/fa-rows.cpp): fa-rows (9) on AVX2 with FMA
# and F16C, in blocks of 8 keys; see 9. Listed as its own id because it
# changed results on AVX2 machines (it is listed on every machine, so an
# addon or checkpoint from before it is not taken on AVX-512 either).
#
# 22. detect-encode-reuse (src/whisper.cpp): a request without a language
# runs whisper.cpp's language detection first, which encodes the first 30 s
# (in the full window, clear-padded-kv-caches above) and decodes one token;
# whisper_full then encoded the same window again for its first window, so
# leaving `language` out cost a whole encoder pass (ours took 1.49x the time
# of a request with a language; after the patch 0.95x on the held-out test
# half, where faster-whisper takes 1.37x: docs/performance.md). The
# encoder's output lives in the state's cross-attention cache, which the
# detection's one decode step only reads. So when this run's detection has
# just encoded and the first window is that one (seek 0, the full window:
# audio_ctx 0, as the detection's), the first window takes the cache as it
# is. The encoding is the same computation on the same mel with the same
# threads, so the results are bit for bit the same; whisper.cpp's timings
# count one encoder run fewer (test/real/real-weights.test.ts reads them
# from whisper-cli). The flag is cleared at the start of every run and at
# the first window, so a pooled state never takes another run's encoding.
# Could go upstream.
#
# 23. q0-row-panels-avx512 (cmake/patches/q0-row-panels.cpp): q0-row-panels
# (20) on AVX-512 with VNNI, in 16-row panels. There the encoder's q8_0
# products took q0-offset-dot's 4-row tiles: per block of each row and
# column a vpdpbusd on 8 lanes, a conversion and a multiply-add, and a
# horizontal sum per output. In a panel one 512-bit vpdpbusd takes a
# column's 4 bytes against 4 bytes of each of 16 rows; the weights are laid
# out with their top bit flipped (a + 128, vpdpbusd's unsigned operand) and
# each block of a column starts at -128 * sum(b), which every thread computes
# once per product, as q0-offset-dot does. Every block's integer sum is
# exact, so the results are the 8-row panels' bits:
# test/native/q0_row_panels.cpp checks them against the same scalar copy, and
# they differ from upstream's tiles in their last bits as 20's do
# (docs/performance.md: what they cost and change). Listed as its own id
# because it changes results on AVX-512 machines with VNNI. Could go
# upstream as an AVX-512 VNNI q8_0 kernel.
#
# 24. beam-finished-hypotheses (src/whisper.cpp): at temperature 0,
# whisper.cpp's beam search (with beam-top-k) departs from OpenAI's
# (whisper/decoding.py, BeamSearchDecoder, whose patience option
# CTranslate2's beam search, which faster-whisper runs, also takes) in two
# ways. At the first step every decoder holds the same prompt, and the
# check that skips a candidate equal to the one just taken is off there
# (`i > 0`), so all five beams took the most likely first token. And a beam
# that ended (or failed: a timestamp going back, no timestamp at the end)
# stayed in its decoder, so the beam narrowed by one for every such beam, to
# the end of the window. OpenAI's keeps beam_size live beams, sets the ended
# ones apart as it ranks the candidates, and stops when beam_size have ended
# (patience 1), ranking those, made up with the best live ones if fewer
# ended. The patch comes close: the skip applies at the first step too; an
# ended beam is copied to a list, and at the next step its decoder (or a
# failed beam's) takes a live candidate again, so the beam runs one decoder
# short only for the step a beam ends at; the window ends when beam_size
# beams have ended (or all decoders have, as before), and the ranking
# (whisper.cpp's own: length-normalised log-probability, the entropy check)
# runs over the ended beams, first ended first, made up to beam_size with
# the live ones of highest log-probability. Still unlike OpenAI's: each beam
# offers beam_size candidates (OpenAI's beam_size + 1), and an ending
# candidate takes a slot for its step. Sampling at temperatures above 0 is
# as before. test/native/beam_finished.cpp counts the live beams step by
# step on a real model (test/real/real-weights.test.ts). It changes a few
# beam-5 texts (docs/performance.md). Could go upstream as a fix.
#
# 25. f16c-conversions (cmake/patches/f16c-conversions.cpp, in ops.cpp):
# ggml-cpu converts a single f32 to f16 with GGML_CPU_FP32_TO_FP16, which on
# x86 falls through to ggml's software conversion (simd-mappings.h defines
# the F16C instruction as GGML_CPU_COMPUTE_FP32_TO_FP16 but sets the macro
# only for POWER and RISC-V), and its dup converts through the same
# function. perf on whisper-cli put that software conversion, inside
# ggml_compute_forward_dup (the encoder's K/V copied to f16 at every layer,
# and the cross-attention cache), at 3 % of the encoder's samples on the
# AVX2 EPYC, and im2col (the convolutions' input, converted one value at a
# time) at 1.6 %. With F16C the patched ops.cpp converts with one
# vcvtss2sh-class instruction (_cvtss_sh), and a copy whose source rows are
# contiguous converts each row with ggml_cpu_fp32_to_fp16 (8 or 16 values
# per instruction). Both round to nearest even as the software conversion
# does, so every finite value and infinity converts to the same bits
# (test/native/f16c_conversions.cpp, ties and the overflow edge included;
# a NaN stays a NaN). Could go upstream (define GGML_CPU_FP32_TO_FP16 for F16C).
set(STT_WHISPER_PATCH_ID "clear-padded-kv-caches,yielding-barrier,beam-top-k,shared-q0-tiles,q0-one-pass,fa-wide-tiles,resume-point,fresh-sampling-seed,fa-rows,fa-tile-loops,gelu-vector-table,dft-twiddles,fa-tile-gemm,lazy-probs,q0-offset-dot,q0-prefetch-rows,fa-fixed-key-chunks,decoder-threads,fa-row-prefetch,q0-row-panels,fa-rows-avx2,detect-encode-reuse,q0-row-panels-avx512,beam-finished-hypotheses,f16c-conversions")

# Patches too long to keep in this file (read where they are inserted).
set(STT_PATCHES_DIR "${CMAKE_CURRENT_LIST_DIR}/patches")

function(stt_patch_insert text_var anchor insertion)
  string(FIND "${${text_var}}" "${anchor}" at)
  if (at EQUAL -1)
    message(FATAL_ERROR "cmake/whisper-patches.cmake: a line it patches is not in whisper.cpp; review the patch for this whisper.cpp version:\n${anchor}")
  endif()
  string(REPLACE "${anchor}" "${insertion}${anchor}" patched "${${text_var}}")
  set(${text_var} "${patched}" PARENT_SCOPE)
endfunction()

# Inserts the code of cmake/patches/<name> ahead of `anchor`, and re-runs
# the configure when that file changes.
function(stt_patch_insert_file text_var anchor name)
  set(file "${STT_PATCHES_DIR}/${name}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${file}")
  file(READ "${file}" code)
  stt_patch_insert(${text_var} "${anchor}" "${code}")
  set(${text_var} "${${text_var}}" PARENT_SCOPE)
endfunction()

# Replaces `anchor`, which must occur exactly once, by `replacement`.
function(stt_patch_replace text_var anchor replacement)
  stt_patch_replace_all(${text_var} "${anchor}" "${replacement}" 1 "a text it replaces")
  set(${text_var} "${${text_var}}" PARENT_SCOPE)
endfunction()

# Replaces every occurrence of `anchor`, which must occur exactly `count`
# times (`what` names the places in the error), by `replacement`.
function(stt_patch_replace_all text_var anchor replacement count what)
  string(REPLACE "${anchor}" "@STT_ANCHOR@" marked "${${text_var}}")
  string(REGEX MATCHALL "@STT_ANCHOR@" found "${marked}")
  list(LENGTH found n)
  if (NOT n EQUAL count)
    message(FATAL_ERROR "cmake/whisper-patches.cmake: ${what}: ${n} found, not ${count}; review the patch for this whisper.cpp version:\n${anchor}")
  endif()
  string(REPLACE "@STT_ANCHOR@" "${replacement}" patched "${marked}")
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
  # shared-q0-tiles: the second llamafile call runs after the counter reset and
  # its barrier; it may share tiles when it is the op's only product.
  stt_patch_insert(text
    "        for (int64_t i13 = 0; i13 < ne13; i13++)\n            for (int64_t i12 = 0; i12 < ne12; i12++)\n                if (!llamafile_sgemm(params,\n                                     ne01, ne11, ne00/ggml_blck_size(src0->type),\n                                     (const char *)src0->data + i12/r2*nb02 + i13/r3*nb03,\n                                     nb01/ggml_type_size(src0->type),\n                                     (const char *)wdata"
    "        // stt-gateway (cmake/whisper-patches.cmake, shared-q0-tiles)\n        stt_sgemm_shared_pool = ne12 * ne13 == 1 ? params->threadpool : NULL;\n")
  stt_patch_replace(text
    "                    goto UseGgmlGemm2;\n        return;\n    }\nUseGgmlGemm2:;\n"
    "                    goto UseGgmlGemm2;\n        stt_sgemm_shared_pool = NULL;\n        return;\n    }\nUseGgmlGemm2:;\n    stt_sgemm_shared_pool = NULL;\n")
  stt_patch_insert(text
    "void ggml_threadpool_chunk_set(struct ggml_threadpool * tp, int value) {\n"
    "// stt-gateway (cmake/whisper-patches.cmake, shared-q0-tiles): set by a thread\n// around the llamafile call whose tiles it may share; read by sgemm.cpp.\n_Thread_local struct ggml_threadpool * stt_sgemm_shared_pool = NULL;\n\n")
  # fa-fixed-key-chunks: the one-query path's partials, one per key chunk.
  stt_patch_replace(text
    "                        size_t n_chunks = n_tasks;\n"
    "                        size_t n_chunks = ${STT_FA_KEY_CHUNKS}; // stt-gateway (cmake/whisper-patches.cmake, fa-fixed-key-chunks)\n")
  # fa-wide-tiles: the tiled flash attention's scratch, sized for its taller tiles.
  stt_patch_replace(text
    "size_t prefill  = sizeof(float)*(GGML_FA_TILE_Q*DK + 2*GGML_FA_TILE_Q*GGML_FA_TILE_KV + GGML_FA_TILE_Q*DV + GGML_FA_TILE_KV*DV + GGML_FA_TILE_KV*DK)*n_tasks;"
    "size_t prefill  = sizeof(float)*(${STT_FA_TILE_Q}*DK + 2*${STT_FA_TILE_Q}*GGML_FA_TILE_KV + ${STT_FA_TILE_Q}*DV + GGML_FA_TILE_KV*DV + GGML_FA_TILE_KV*DK)*n_tasks; // stt-gateway (cmake/whisper-patches.cmake, fa-wide-tiles)")
  stt_write_if_changed("${out_file}" "${text}")
endfunction()

# fa-wide-tiles in the CPU backend's flash attention (see the list at the top).
function(stt_patch_ops whisper_dir out_file)
  set(source "${whisper_dir}/ggml/src/ggml-cpu/ops.cpp")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${source}")
  file(READ "${source}" text)
  # Only the tiled function's height changes. The caller's threshold
  # (ggml_fa_tile_config::Q) stays: 64-127 queries (a decoder pass over a long
  # prompt) must keep the tiled path, which pads a short tile, and not fall to
  # the one-row path's f16 accumulator.
  stt_patch_replace(text
    "    static constexpr int Q_TILE_SZ  = ggml_fa_tile_config::Q;\n"
    "    // stt-gateway (cmake/whisper-patches.cmake, fa-wide-tiles): taller query tiles.\n    static constexpr int Q_TILE_SZ  = ${STT_FA_TILE_Q};\n")
  stt_patch_replace(text
    "                    ggml_fp16_to_fp32_row((const ggml_fp16_t *)v_data, V32 + tk * DV, DV);\n"
    "                    ggml_cpu_fp16_to_fp32((const ggml_fp16_t *)v_data, V32 + tk * DV, DV); // stt-gateway (fa-wide-tiles): vectorised\n")
  # fa-rows: the decoder's rows of a head together, ahead of the one-row path.
  stt_patch_insert_file(text "static void ggml_compute_forward_flash_attn_ext_f16_one_chunk(\n" fa-rows.cpp)
  # fa-tile-loops: the tiled path's row maximum and key packing, vectorised.
  stt_patch_insert_file(text "static void ggml_compute_forward_flash_attn_ext_tiled(\n" fa-tile-loops.cpp)
  # fa-tile-gemm: the tiled path's two products with B held in registers.
  stt_patch_insert_file(text "static void ggml_compute_forward_flash_attn_ext_tiled(\n" fa-tile-gemm.cpp)
  stt_patch_replace(text
    "            simd_gemm(KQ, (const float *)Q_q, K_f32, Q_TILE_SZ, DK, KV_TILE_SZ);\n"
    "            stt_fa_gemm(KQ, (const float *)Q_q, K_f32, Q_TILE_SZ, DK, KV_TILE_SZ); // stt-gateway (fa-tile-gemm)\n")
  stt_patch_replace(text
    "            simd_gemm(VKQ32, KQ, V32, Q_TILE_SZ, KV_TILE_SZ, DV);\n"
    "            stt_fa_gemm(VKQ32, KQ, V32, Q_TILE_SZ, KV_TILE_SZ, DV); // stt-gateway (fa-tile-gemm)\n")
  # gelu-vector-table: GELU's table lookups 16 at a time.
  stt_patch_insert_file(text "static void ggml_compute_forward_gelu_f32(\n" gelu-vector-table.cpp)
  stt_patch_replace(text "        ggml_vec_gelu_f32(nc,\n" "        stt_vec_gelu_f32(nc, // stt-gateway (gelu-vector-table)\n")
  stt_patch_replace(text
    "                ggml_vec_max_f32(KV_TILE_SZ, &tile_max, kq_row);\n"
    "                tile_max = stt_fa_max(KV_TILE_SZ, kq_row); // stt-gateway (fa-tile-loops)\n")
  stt_patch_replace(text
    "            for (int tk = 0; tk < kv_tile; tk++) {\n                const char * k_data = (const char *)k->data + (ic + tk)*nbk1 + ik2*nbk2 + ik3*nbk3;\n"
    "            // stt-gateway (cmake/whisper-patches.cmake, fa-tile-loops): 16 f16 keys at a time (AVX2: 8), the rest below\n            const int tk_packed = kv_type == GGML_TYPE_F16 ? stt_fa_pack_keys((const char *)k->data + ic*nbk1 + ik2*nbk2 + ik3*nbk3, nbk1, kv_tile, DK, K_f32, KV_TILE_SZ) : 0;\n            for (int tk = tk_packed; tk < kv_tile; tk++) {\n                const char * k_data = (const char *)k->data + (ic + tk)*nbk1 + ik2*nbk2 + ik3*nbk3;\n")
  stt_patch_replace(text
    "        float * partials, int64_t partial_stride) {\n\n    const bool write_partials = (partials != nullptr);\n"
    "        float * partials, int64_t partial_stride) {\n    // stt-gateway (cmake/whisper-patches.cmake, fa-rows)\n    if (stt_fa_rows_chunk(params, dst, ir0, ir1, ic_start, ic_end, partials)) return;\n\n    const bool write_partials = (partials != nullptr);\n")
  # fa-row-prefetch: the one-row path asks for the K and V rows of a key
  # STT_FA_PREFETCH_KEYS ahead (row sizes computed once, before the loop).
  stt_patch_insert(text
    "        for (int64_t ic = ic_start; ic < ic_end; ++ic) {\n            const float mv = mp ? slope*GGML_CPU_FP16_TO_FP32(mp[ic]) : 0.0f;\n"
    "        const size_t stt_k_row = ggml_row_size(k->type, DK), stt_v_row = ggml_row_size(v->type, DV); // stt-gateway (fa-row-prefetch)\n")
  stt_patch_insert(text
    "            const char * k_data = (const char *) k->data + ( ic*nbk1 + ik2*nbk2 + ik3*nbk3);\n            kq_vec_dot(DK, &s, 0, k_data, 0, Q_q, 0, 1);\n"
    [=[#if defined(__GNUC__)
            // stt-gateway (cmake/whisper-patches.cmake, fa-row-prefetch): every line of both rows
            if (ic + @STT_FA_PREFETCH_KEYS@ < ic_end) {
                const char * k_next = (const char *) k->data + ((ic + @STT_FA_PREFETCH_KEYS@)*nbk1 + ik2*nbk2 + ik3*nbk3);
                const char * v_next = (const char *) v->data + ((ic + @STT_FA_PREFETCH_KEYS@)*nbv1 + iv2*nbv2 + iv3*nbv3);
                for (size_t at = 0; at < stt_k_row; at += 64) __builtin_prefetch(k_next + at);
                __builtin_prefetch(k_next + stt_k_row - 1);
                for (size_t at = 0; at < stt_v_row; at += 64) __builtin_prefetch(v_next + at);
                __builtin_prefetch(v_next + stt_v_row - 1);
            }
#endif
]=])
  # fa-fixed-key-chunks: one query's keys in STT_FA_KEY_CHUNKS chunks, not
  # one per thread; each thread loops over the chunks dealt to it.
  stt_patch_replace(text
    "    if (use_split_kv_path) {\n        const int64_t chunk_size = (nek1 + nth - 1) / nth;\n"
    [=[    if (use_split_kv_path) {
        // stt-gateway (cmake/whisper-patches.cmake, fa-fixed-key-chunks): a
        // fixed number of key chunks, dealt out to the threads, so the sums
        // are the same whatever the thread count.
        const int64_t n_chunks   = @STT_FA_KEY_CHUNKS@;
        const int64_t chunk_size = (nek1 + n_chunks - 1) / n_chunks;
]=])
  stt_patch_replace(text
    "        const int64_t ic_start = ith * chunk_size;\n        const int64_t ic_end   = std::min(ic_start + chunk_size, nek1);\n\n        const int64_t partial_stride = nth * partial_size;\n        float *       chunk_partials = partials_base + ith * partial_size;\n"
    [=[        const int64_t partial_stride = n_chunks * partial_size;

        for (int64_t chunk = ith; chunk < n_chunks; chunk += nth) {
        const int64_t ic_start = chunk * chunk_size;
        const int64_t ic_end   = std::min(ic_start + chunk_size, nek1);
        float *       chunk_partials = partials_base + chunk * partial_size;
]=])
  stt_patch_replace(text
    "        }\n\n        ggml_barrier(params->threadpool);\n        ggml_flash_attn_ext_reduce_partials(params, dst, nth, chunk_size);\n"
    "        }\n        }\n\n        ggml_barrier(params->threadpool);\n        ggml_flash_attn_ext_reduce_partials(params, dst, n_chunks, chunk_size);\n")
  # f16c-conversions: f32 to f16 with F16C, a row at a time where dup's rows are contiguous.
  stt_patch_insert_file(text "static void ggml_compute_forward_dup_same_cont(\n" f16c-conversions.cpp)
  stt_patch_replace_all(text "type_conversion_table<dst_t>::from_f32(tmp)" "stt_from_f32<dst_t>(tmp)" 3 "dup's conversions to another type")
  stt_patch_replace(text
    "                        for (int i01 = ir0; i01 < ir1; i01++) {\n                            const src_t * src0_ptr = (src_t *) ((char *) src0->data + i01*nb01 + i02*nb02 + i03*nb03);\n                            for (int i00 = 0; i00 < ne00; i00++) {\n"
    "                        for (int i01 = ir0; i01 < ir1; i01++) {\n                            const src_t * src0_ptr = (src_t *) ((char *) src0->data + i01*nb01 + i02*nb02 + i03*nb03);\n                            // stt-gateway (cmake/whisper-patches.cmake, f16c-conversions): the row at once\n                            if (stt_convert_row(src0_ptr, dst_ptr + id, ne00)) {\n                                id += ne00;\n                                continue;\n                            }\n                            for (int i00 = 0; i00 < ne00; i00++) {\n")
  string(REPLACE "@STT_FA_KEY_CHUNKS@" "${STT_FA_KEY_CHUNKS}" text "${text}")
  string(REPLACE "@STT_FA_PREFETCH_KEYS@" "${STT_FA_PREFETCH_KEYS}" text "${text}")
  stt_write_if_changed("${out_file}" "${text}")
endfunction()

# shared-q0-tiles in tinyBLAS_Q0_AVX (see the list at the top).
function(stt_patch_sgemm whisper_dir out_file)
  set(source "${whisper_dir}/ggml/src/ggml-cpu/llamafile/sgemm.cpp")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${source}")
  file(READ "${source}" text)
  string(FIND "${text}" "class tinyBLAS_Q0_AVX {\n" start)
  if (start EQUAL -1)
    message(FATAL_ERROR "cmake/whisper-patches.cmake: tinyBLAS_Q0_AVX is not in sgemm.cpp; review the shared-q0-tiles patch for this whisper.cpp version")
  endif()
  string(SUBSTRING "${text}" ${start} -1 rest)
  string(FIND "${rest}" "\n};\n" length)
  string(SUBSTRING "${rest}" 0 ${length} class)
  string(SUBSTRING "${text}" 0 ${start} before)
  string(SUBSTRING "${rest}" ${length} -1 after)
  # The three tile loops (gemm4xN, gemmMx4, gemm): the fixed split's range
  # becomes the first of the chunks this thread is given.
  stt_patch_replace_all(class
    "        if (end > tiles)\n            end = tiles;\n        for (int64_t job = start; job < end; ++job) {\n"
    "        if (end > tiles)\n            end = tiles;\n        stt_tiles_begin(tiles, start, end);\n        for (int64_t lo, hi; stt_tiles_next(lo, hi);)\n        for (int64_t job = lo; job < hi; ++job) {\n"
    3 "shared-q0-tiles: tinyBLAS_Q0_AVX's tile loops")
  stt_patch_insert(class "    const int ith;\n    const int nth;\n" [=[
    // stt-gateway (cmake/whisper-patches.cmake, shared-q0-tiles). With a
    // pool, threads take numbered chunks of tiles from its counter (which
    // ggml-cpu.c set to nth: chunk i < nth is thread i's first). Chunks are
    // numbered across this product's gemm calls in the order every thread
    // makes them; a number past the current call's is kept for its call.
    ggml_threadpool * const stt_pool = stt_sgemm_shared_pool;
    int64_t stt_tiles = 0, stt_lo = 0, stt_hi = 0; // this call: tiles; the fixed range
    int64_t stt_size = 1;       // tiles per chunk in this call
    int64_t stt_base = 0;       // this call's first chunk number
    int64_t stt_end = 0;        // one past this call's last chunk number
    int64_t stt_held = -1;      // a chunk number taken and not done (-1: none)
    bool stt_took_first = false;

    void stt_tiles_begin(int64_t tiles, int64_t start, int64_t end) {
        stt_tiles = tiles;
        stt_lo = start;
        stt_hi = end;
        if (!stt_pool) return;
        const int64_t chunks = std::min<int64_t>(tiles, (int64_t)nth * @STT_Q0_CHUNKS_PER_THREAD@);
        stt_size = (tiles + chunks - 1) / chunks;
        stt_base = stt_end;
        stt_end += (tiles + stt_size - 1) / stt_size;
    }

    bool stt_tiles_next(int64_t & lo, int64_t & hi) {
        if (!stt_pool) {
            lo = stt_lo;
            hi = stt_hi;
            stt_lo = stt_hi;
            return lo < hi;
        }
        if (stt_held < 0) {
            stt_held = stt_took_first ? ggml_threadpool_chunk_add(stt_pool, 1) : ith;
            stt_took_first = true;
        }
        if (stt_held >= stt_end) return false;
        lo = (stt_held - stt_base) * stt_size;
        hi = std::min(lo + stt_size, stt_tiles);
        stt_held = -1;
        return true;
    }

]=])
  string(REPLACE "@STT_Q0_CHUNKS_PER_THREAD@" "${STT_Q0_CHUNKS_PER_THREAD}" class "${class}")
  # q0-one-pass: an odd column count of 3 or more with 4-row tiles goes
  # through stt_gemm4_all_columns, the rows left over through mnpack as before.
  stt_patch_replace(class
    "        int64_t mc, nc, mp, np;\n        switch ((MIN(m - m0, 4) << 4) | MIN(n - n0, 4)) {\n"
    [=[        int64_t mc, nc, mp, np;
#if (VECTOR_REGISTERS == 16 || VECTOR_REGISTERS == 32) && defined(__AVX2__) && defined(__F16C__)
        // stt-gateway (cmake/whisper-patches.cmake, q0-one-pass)
        if (m - m0 >= 4 && n - n0 > stt_columns_per_tile && (n - n0) % stt_columns_per_tile != 0) {
            stt_gemm4_all_columns(m0, m, n0, n);
            mnpack(m0 + (m - m0) / 4 * 4, m, n0, n);
            return;
        }
#endif
        switch ((MIN(m - m0, 4) << 4) | MIN(n - n0, 4)) {
]=])
  stt_patch_insert(class "    // Templated functions for gemm of dimensions Mx4\n" [=[
    // stt-gateway (cmake/whisper-patches.cmake, q0-one-pass): one job is a
    // 4-row tile across all columns, as many at a time as mnpack's widest
    // tile (2 with 16 registers, 4 with 32) and then the rest, so its rows
    // of weights are read once; stt_tile4xN is gemm4xN's tile.
    static constexpr int64_t stt_columns_per_tile = VECTOR_REGISTERS == 32 ? 4 : 2;
    NOINLINE void stt_gemm4_all_columns(int64_t m0, int64_t m, int64_t n0, int64_t n) {
        int64_t tiles = (m - m0) / 4;
        int64_t duty = (tiles + nth - 1) / nth;
        int64_t start = duty * ith;
        int64_t end = start + duty;
        if (end > tiles)
            end = tiles;
        stt_tiles_begin(tiles, start, end);
        for (int64_t lo, hi; stt_tiles_next(lo, hi);)
        for (int64_t job = lo; job < hi; ++job) {
            int64_t ii = m0 + job * 4;
            int64_t jj = n0;
            for (; jj + stt_columns_per_tile <= n; jj += stt_columns_per_tile)
                stt_tile4xN<stt_columns_per_tile>(ii, jj);
            switch (n - jj) {
            case 3: stt_tile4xN<3>(ii, jj); break;
            case 2: stt_tile4xN<2>(ii, jj); break;
            case 1: stt_tile4xN<1>(ii, jj); break;
            }
        }
    }

    template <int RN>
    inline void stt_tile4xN(int64_t ii, int64_t jj) {
            __m256 Cv[RN][4] = {};
            for (int64_t l = 0; l < k; ++l) {
                uint64_t a_delta = ((uint64_t)A[lda * (ii + 3) + l].d << 48) | ((uint64_t)A[lda * (ii + 2) + l].d << 32) | ((uint64_t)A[lda * (ii + 1) + l].d << 16) | (A[lda * (ii + 0) + l].d);
                __m128 da = _mm_cvtph_ps(_mm_set_epi64x(0, a_delta));
                __m256i avec0 = load(A + lda * (ii + 0) + l);
                __m256i avec1 = load(A + lda * (ii + 1) + l);
                __m256i avec2 = load(A + lda * (ii + 2) + l);
                __m256i avec3 = load(A + lda * (ii + 3) + l);
                for (int64_t j = 0; j < RN; ++j) {
                        __m128 db = _mm_set1_ps(unhalf(B[ldb * (jj + j) + l].d));
                        __m256 dvec =  _mm256_castps128_ps256(_mm_mul_ps(da, db));
                        dvec = _mm256_permute2f128_ps(dvec ,dvec, 0);
                        Cv[j][0] = madd(_mm256_shuffle_ps(dvec, dvec, 0),
                                    updot(_mm256_sign_epi8(avec0, avec0),
                                          _mm256_sign_epi8(load(B + ldb * (jj + j) + l), avec0)),
                                    Cv[j][0]);
                        Cv[j][1] = madd(_mm256_shuffle_ps(dvec, dvec, 85),
                                    updot(_mm256_sign_epi8(avec1, avec1),
                                            _mm256_sign_epi8(load(B + ldb * (jj + j) + l), avec1)),
                                    Cv[j][1]);
                        Cv[j][2] = madd(_mm256_shuffle_ps(dvec, dvec, 170),
                                    updot(_mm256_sign_epi8(avec2, avec2),
                                            _mm256_sign_epi8(load(B + ldb * (jj + j) + l), avec2)),
                                    Cv[j][2]);
                        Cv[j][3] = madd(_mm256_shuffle_ps(dvec, dvec, 255),
                                    updot(_mm256_sign_epi8(avec3, avec3),
                                            _mm256_sign_epi8(load(B + ldb * (jj + j) + l), avec3)),
                                    Cv[j][3]);
                }
            }
            for (int64_t j = 0; j < RN; ++j)
                for (int64_t i = 0; i < 4; ++i)
                    C[ldc * (jj + j) + (ii + i)] = hsum(Cv[j][i]);
    }

]=])
  # q0-prefetch-rows: stt_gemm4_all_columns asks for the next tile's rows of
  # weights while it computes this one's.
  stt_patch_replace(class
    "            int64_t ii = m0 + job * 4;\n            int64_t jj = n0;\n"
    [=[            int64_t ii = m0 + job * 4;
            int64_t jj = n0;
            // stt-gateway (cmake/whisper-patches.cmake, q0-prefetch-rows)
            if (job + 1 < tiles) {
                const char * next = reinterpret_cast<const char *>(A + lda * (ii + 4));
                for (size_t at = 0; at < 4 * lda * sizeof(TA); at += 64)
                    _mm_prefetch(next + at, _MM_HINT_T0);
            }
]=])
  # q0-offset-dot: gemm4xN's tile and stt_tile4xN (its copy) take their
  # dot products through stt_dot.
  stt_patch_insert_file(class "    inline __m256 updot(__m256i u, __m256i s) {\n" q0-offset-dot.cpp)
  foreach(row 0 1 2 3)
    if (row EQUAL 0)
      set(indent "                                          ")
    else()
      set(indent "                                            ")
    endif()
    stt_patch_replace_all(class
      "updot(_mm256_sign_epi8(avec${row}, avec${row}),\n${indent}_mm256_sign_epi8(load(B + ldb * (jj + j) + l), avec${row}))"
      "stt_dot(avec${row}, load(B + ldb * (jj + j) + l))"
      2 "q0-offset-dot: row ${row}'s dot product in gemm4xN and stt_tile4xN")
  endforeach()
  # q0-row-panels: products of 16 columns or more take 8-row panels on AVX2
  # without VNNI, and 16-row panels on AVX-512 with VNNI (q0-row-panels-avx512),
  # ahead of q0-one-pass and upstream's tiles. Elsewhere (AVX-VNNI without
  # AVX-512: q0-offset-dot's tiles; AVX-512 without VNNI: upstream's 4x4
  # tiles, not measured there) no panels.
  # test/native/q0_row_panels.cpp asks the library which it built.
  set(STT_Q0_ROW_PANELS_PROBE [=[
#if defined(__AVX2__) && defined(__F16C__) && defined(__FMA__) && !defined(__AVX512F__) && !defined(__AVXVNNI__)
#define STT_Q0_ROW_PANELS 8
#elif defined(__AVX2__) && defined(__F16C__) && defined(__FMA__) && defined(__AVX512F__) && defined(__AVX512VNNI__)
#define STT_Q0_ROW_PANELS 16
#else
#define STT_Q0_ROW_PANELS 0
#endif
// stt-gateway (cmake/whisper-patches.cmake, q0-row-panels): the rows of this build's q8_0 panels (0: none).
extern "C" int stt_q0_row_panels(void) { return STT_Q0_ROW_PANELS; }
]=])
  stt_patch_insert_file(class "    // Templated functions for gemm of dimensions Mx4\n" q0-row-panels.cpp)
  stt_patch_replace(class
    "        // stt-gateway (cmake/whisper-patches.cmake, q0-one-pass)\n"
    [=[        // stt-gateway (cmake/whisper-patches.cmake, q0-row-panels)
#if STT_Q0_ROW_PANELS
        if constexpr (std::is_same_v<TA, block_q8_0>) {
            if (m - m0 >= stt_panel_rows && n - n0 >= stt_panel_min_columns) {
                stt_gemm_panels(m0, m, n0, n);
                mnpack(m0 + (m - m0) / stt_panel_rows * stt_panel_rows, m, n0, n);
                return;
            }
        }
#endif
        // stt-gateway (cmake/whisper-patches.cmake, q0-one-pass)
]=])
  set(text "${before}${class}${after}")
  stt_patch_insert(text "#include <array>\n"
    "#include <algorithm>\n#include <cstring>\n#include <type_traits>\n#include <vector>\n// stt-gateway (cmake/whisper-patches.cmake, shared-q0-tiles): defined in ggml-cpu.c.\nextern \"C\" thread_local ggml_threadpool * stt_sgemm_shared_pool;\n${STT_Q0_ROW_PANELS_PROBE}")
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
  # lazy-probs: at temperature 0, probabilities computed where they are read.
  stt_patch_insert_file(text "static void whisper_process_logits(\n" lazy-probs.cpp)
  stt_patch_replace(text
    "    whisper_compute_probs(logits, n_logits, logprobs, probs);\n"
    "    // stt-gateway (cmake/whisper-patches.cmake, lazy-probs): at temperature 0 the timestamp tokens' only.\n    if (temperature < 1e-6f) {\n        stt_compute_probs_from(logits, vocab.token_beg, n_logits, logprobs, probs);\n    } else {\n        whisper_compute_probs(logits, n_logits, logprobs, probs);\n    }\n")
  stt_patch_replace(text
    "    if (best) {\n        for (int i = 0; i < n_logits; ++i) {\n            if (result.p < probs[i]) {\n                result.id   = i;\n                result.p    = probs[i];\n                result.plog = logprobs[i];\n            }\n        }\n    } else {\n"
    "    if (best) {\n        stt_best_token(decoder, vocab.token_beg, n_logits, result); // stt-gateway (lazy-probs)\n    } else {\n")
  stt_patch_replace(text
    "        result.push_back({ id, tid, probs[id], logprobs[id], pt, ptsum, -1, -1, -1, 0.0f, });\n"
    "        result.push_back({ id, tid, stt_top_k ? stt_prob(decoder, vocab.token_beg, id) : probs[id], logprobs[id], pt, ptsum, -1, -1, -1, 0.0f, }); // stt-gateway (lazy-probs)\n")
  # The greedy sampler's own test of temperature 0 must stay the one above (and
  # beam-top-k's): if a new pin changes it, the configure stops here.
  stt_patch_replace(text
    "                                        if (t_cur < 1e-6f) {\n                                            decoder.sequence.tokens.push_back(whisper_sample_token(*ctx, decoder, true));\n"
    "                                        if (t_cur < 1e-6f) { // stt-gateway (lazy-probs): the threshold whisper_process_logits tests\n                                            decoder.sequence.tokens.push_back(whisper_sample_token(*ctx, decoder, true));\n")
  # resume-point: the window's seek in the state, a resumed run's clock and prompt kept.
  stt_patch_insert(text
    "    std::vector<whisper_token>   prompt_past0; // static carried initial prompt (if enabled)\n"
    "    // stt-gateway (cmake/whisper-patches.cmake, resume-point)\n    int  stt_seek     = 0;     // the start of the window being decoded\n    bool stt_resuming = false; // the next whisper_full continues a stopped run\n    int  stt_n_decoders = 0;   // the decoders the run uses\n    std::vector<std::string> stt_rngs; // a resumed run's decoders' random-number states\n")
  stt_patch_insert(text "#include <thread>\n" "#include <sstream> // stt-gateway (resume-point)\n")
  # fresh-sampling-seed, and resume-point's random-number states.
  stt_patch_insert(text
    "    // the accumulated text context split into static (prompt_past0) and dynamic (prompt_past1)\n"
    "    // stt-gateway (cmake/whisper-patches.cmake, fresh-sampling-seed): decoder 0 too starts each run from its seed.\n    state->decoders[0].rng = std::mt19937(0);\n    // stt-gateway (resume-point): a resumed run's decoders draw on from where the stopped run's were.\n    state->stt_n_decoders = n_decoders;\n    if (state->stt_resuming) {\n        for (int j = 0; j < n_decoders && j < (int) state->stt_rngs.size(); ++j) {\n            std::istringstream in(state->stt_rngs[j]);\n            in >> state->decoders[j].rng;\n        }\n    }\n\n")
  stt_patch_insert(text
    "        if (params.encoder_begin_callback) {\n"
    "        state->stt_seek = seek; // stt-gateway (resume-point)\n\n")
  stt_patch_replace(text
    "    if (params.token_timestamps) {\n        state->t_beg    = 0;\n        state->t_last   = 0;\n        state->tid_last = 0;\n"
    "    if (params.token_timestamps && !state->stt_resuming) { // stt-gateway (resume-point): a resumed run keeps its clock\n        state->t_beg    = 0;\n        state->t_last   = 0;\n        state->tid_last = 0;\n    }\n    if (params.token_timestamps) {\n")
  stt_patch_replace(text
    "        if (seek > seek_start && seek + 500 >= seek_end) {\n"
    "        if ((seek > seek_start || state->stt_resuming) && seek + 500 >= seek_end) { // stt-gateway (resume-point)\n")
  string(APPEND text [=[

// stt-gateway (cmake/whisper-patches.cmake, resume-point). Called from
// encoder_begin_callback: the window about to be decoded (its seek), the
// tokens its prompt is taken from (the last n_text_ctx/2 at most are ever
// used), the token-timestamp clock (t_beg, t_last, tid_last) and the
// decoders' random-number states, as text.
void stt_whisper_checkpoint(const struct whisper_state * state, int & seek, std::vector<whisper_token> & prompt, int64_t clock[3],
                            std::vector<std::string> & rngs) {
    seek = state->stt_seek;
    prompt = state->prompt_past1;
    clock[0] = state->t_beg;
    clock[1] = state->t_last;
    clock[2] = state->tid_last;
    rngs.clear();
    for (int j = 0; j < state->stt_n_decoders; ++j) {
        std::ostringstream out;
        out << state->decoders[j].rng;
        rngs.push_back(out.str());
    }
}
// Before whisper_full_with_state (offset_ms at the checkpoint's seek, its
// prompt as prompt_tokens): the clock and states to continue from; after it,
// with clock NULL, back to normal runs.
void stt_whisper_resume(struct whisper_state * state, const int64_t * clock, const std::vector<std::string> & rngs) {
    state->stt_resuming = clock != nullptr;
    state->stt_rngs = clock ? rngs : std::vector<std::string>();
    if (!clock) return;
    state->t_beg    = clock[0];
    state->t_last   = clock[1];
    state->tid_last = (whisper_token) clock[2];
}
]=])
  # decoder-threads: the state's decoder thread count, if set, for whisper_full's decodes.
  stt_patch_insert(text
    "    std::vector<whisper_token>   prompt_past0; // static carried initial prompt (if enabled)\n"
    "    int stt_decoder_threads = 0; // stt-gateway (cmake/whisper-patches.cmake, decoder-threads): 0 = n_threads\n")
  stt_patch_replace_all(text
    "whisper_decode_internal(*ctx, *state, state->batch, params.n_threads, false, params.abort_callback"
    "whisper_decode_internal(*ctx, *state, state->batch, state->stt_decoder_threads > 0 ? state->stt_decoder_threads : params.n_threads, false, params.abort_callback"
    2 "decoder-threads: whisper_full's prompt and token decodes")
  string(APPEND text [=[

// stt-gateway (cmake/whisper-patches.cmake, decoder-threads): the threads
// whisper_full decodes with on this state from now on; 0 = its n_threads.
void stt_whisper_set_decoder_threads(struct whisper_state * state, int n_threads) {
    state->stt_decoder_threads = n_threads > 0 ? n_threads : 0;
}
]=])
  # detect-encode-reuse: the first window takes the encoding language detection has just made of it.
  stt_patch_insert(text
    "    std::vector<whisper_token>   prompt_past0; // static carried initial prompt (if enabled)\n"
    "    bool stt_detect_encoded = false; // stt-gateway (cmake/whisper-patches.cmake, detect-encode-reuse): kv_cross holds this run's detection's encoding of seek 0, full window\n")
  stt_patch_insert(text
    "    // auto-detect language if not specified\n"
    "    state->stt_detect_encoded = false; // stt-gateway (detect-encode-reuse): set only by this run's detection\n")
  stt_patch_replace(text
    "        params.language = whisper_lang_str(lang_id);\n"
    "        params.language = whisper_lang_str(lang_id);\n        state->stt_detect_encoded = true; // stt-gateway (detect-encode-reuse)\n")
  stt_patch_replace(text
    "        // encode audio features starting at offset seek\n        if (!whisper_encode_internal(*ctx, *state, seek, params.n_threads, params.abort_callback, params.abort_callback_user_data)) {\n"
    "        // encode audio features starting at offset seek\n        // stt-gateway (cmake/whisper-patches.cmake, detect-encode-reuse): unless this run's language detection\n        // has just encoded this very window (seek 0 in the full window) into kv_cross.\n        const bool stt_encoded = state->stt_detect_encoded && seek == 0 && state->exp_n_audio_ctx == 0;\n        state->stt_detect_encoded = false;\n        if (!stt_encoded && !whisper_encode_internal(*ctx, *state, seek, params.n_threads, params.abort_callback, params.abort_callback_user_data)) {\n")
  # dft-twiddles: the 25-point DFTs of the log-mel FFT, four k at a time.
  stt_patch_insert_file(text "static void dft(const float* in, int N, float* out) {\n" dft-twiddles.cpp)
  stt_patch_replace(text
    "static void dft(const float* in, int N, float* out) {\n    const int sin_cos_step = SIN_COS_N_COUNT / N;\n"
    "static void dft(const float* in, int N, float* out) {\n    if (stt_dft(in, N, out)) return; // stt-gateway (cmake/whisper-patches.cmake, dft-twiddles)\n    const int sin_cos_step = SIN_COS_N_COUNT / N;\n")
  # For test/native/dft_twiddles.cpp: whisper.cpp's dft() as patched.
  stt_patch_insert(text "// Cooley-Tukey FFT\n"
    "// stt-gateway (cmake/whisper-patches.cmake, dft-twiddles): dft() for test/native/dft_twiddles.cpp.\nextern \"C\" void stt_whisper_dft(const float * in, int n, float * out) { dft(in, n, out); }\n\n")
  # beam-finished-hypotheses: at temperature 0, the beam stays beam_size wide and ends at beam_size finished beams.
  stt_patch_insert(text "int whisper_full_with_state(\n" [=[
// stt-gateway (cmake/whisper-patches.cmake, beam-finished-hypotheses): a beam
// that ended, kept apart from the decoders so that its decoder can go on.
struct stt_finished_beam {
    whisper_sequence sequence;
    int  seek_delta;
    bool has_ts;
};

]=])
  stt_patch_insert(text "            // TAGS: WHISPER_DECODER_INIT\n" [=[
            // stt-gateway (cmake/whisper-patches.cmake, beam-finished-hypotheses)
            const bool stt_keep_width = params.strategy == WHISPER_SAMPLING_BEAM_SEARCH && t_cur < 1e-6f;
            std::vector<stt_finished_beam> stt_finished;

]=])
  stt_patch_replace(text
    "whisper_sequence_tokens_equal(beam_candidates[cur_c].sequence, cur.sequence) && i > 0) {\n"
    "whisper_sequence_tokens_equal(beam_candidates[cur_c].sequence, cur.sequence) && (i > 0 || stt_keep_width)) { // stt-gateway (beam-finished-hypotheses): the first step's beams differ too\n")
  stt_patch_insert(text "                    uint32_t cur_c = 0;\n" [=[
                    // stt-gateway (beam-finished-hypotheses): a decoder whose beam ended
                    // (kept in stt_finished) or failed takes a live candidate again.
                    if (stt_keep_width) {
                        for (int j = 0; j < n_decoders_cur; ++j) {
                            state->decoders[j].completed = false;
                            state->decoders[j].failed    = false;
                        }
                    }

]=])
  stt_patch_insert(text "                            WHISPER_LOG_DEBUG(\"%s: decoder %d completed\\n\", __func__, j);\n"
    "                            if (stt_keep_width) stt_finished.push_back({ decoder.sequence, seek_delta, has_ts }); // stt-gateway (beam-finished-hypotheses)\n")
  stt_patch_replace(text
    "                    if (completed_all) {\n                        break;\n                    }\n"
    "                    // stt-gateway (beam-finished-hypotheses): or beam_size beams have ended (OpenAI's patience 1)\n                    if (completed_all || (stt_keep_width && (int) stt_finished.size() >= n_decoders_cur)) {\n                        break;\n                    }\n")
  stt_patch_insert(text "            // rank the resulting sequences and select the best one\n" [=[
            // stt-gateway (cmake/whisper-patches.cmake, beam-finished-hypotheses):
            // the ended beams, first ended first, made up to beam_size with the
            // live ones that score best (OpenAI's finalize), are the ones ranked.
            if (stt_keep_width && !stt_finished.empty()) {
                if ((int) stt_finished.size() > n_decoders_cur) stt_finished.resize(n_decoders_cur);
                std::vector<int> live;
                for (int j = 0; j < n_decoders_cur; ++j) {
                    if (!state->decoders[j].completed && !state->decoders[j].failed) live.push_back(j);
                }
                std::stable_sort(live.begin(), live.end(), [&](int a, int b) {
                    return state->decoders[a].sequence.sum_logprobs_all > state->decoders[b].sequence.sum_logprobs_all;
                });
                for (const int j : live) {
                    if ((int) stt_finished.size() >= n_decoders_cur) break;
                    stt_finished.push_back({ state->decoders[j].sequence, state->decoders[j].seek_delta, state->decoders[j].has_ts });
                }
                for (int j = 0; j < n_decoders_cur; ++j) {
                    auto & decoder = state->decoders[j];
                    decoder.failed = j >= (int) stt_finished.size();
                    if (decoder.failed) continue;
                    decoder.sequence   = std::move(stt_finished[j].sequence);
                    decoder.seek_delta = stt_finished[j].seek_delta;
                    decoder.has_ts     = stt_finished[j].has_ts;
                    decoder.completed  = true;
                }
            }

]=])
  string(APPEND text "\n// stt-gateway (cmake/whisper-patches.cmake): which patches this copy carries.\nextern \"C\" const char * stt_whisper_patches(void) { return \"${STT_WHISPER_PATCH_ID}\"; }\n")
  stt_write_if_changed("${out_file}" "${text}")
endfunction()
