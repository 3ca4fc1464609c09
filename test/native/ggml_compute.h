// The step every ggml check in test/native shares: runs the graph that ends
// in `out` on the CPU with `threads` threads, returns its f32 values and
// frees the context. Exits with 2 when ggml cannot run the graph.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ggml-cpu.h"
#include "ggml.h"

inline std::vector<float> compute_and_free(ggml_context * ctx, ggml_tensor * out, int threads) {
    ggml_cgraph * graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, out);
    if (ggml_graph_compute_with_ctx(ctx, graph, threads) != GGML_STATUS_SUCCESS) {
        std::fprintf(stderr, "ggml_graph_compute_with_ctx failed\n");
        std::exit(2);
    }
    const float * data = static_cast<const float *>(out->data);
    std::vector<float> values(data, data + ggml_nelements(out));
    ggml_free(ctx);
    return values;
}
