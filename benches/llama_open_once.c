/* llama.cpp's side of the whole-process comparison in open_vs_llama.py: open
 * a GGUF file with llama.cpp's own reader (gguf_init_from_file, no_alloc:
 * header, metadata and tensor infos parsed and checked, no tensor data
 * read), ask for the tensor count, free it, exit. The script compiles this
 * against the libggml-base.so it found; the Rust side is `open_loop once`.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* From llama.cpp's ggml/include/gguf.h. */
struct gguf_context;
struct ggml_context;
struct gguf_init_params {
    bool no_alloc;
    struct ggml_context ** ctx;
};
struct gguf_context * gguf_init_from_file(const char * fname, struct gguf_init_params params);
int64_t gguf_get_n_tensors(const struct gguf_context * ctx);
void gguf_free(struct gguf_context * ctx);

int main(int argc, char ** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: llama_open_once FILE\n");
        return 2;
    }
    struct gguf_init_params params = { true, NULL };
    struct gguf_context * ctx = gguf_init_from_file(argv[1], params);
    if (!ctx) {
        fprintf(stderr, "llama_open_once: llama.cpp cannot open %s\n", argv[1]);
        return 1;
    }
    int64_t n = gguf_get_n_tensors(ctx);
    gguf_free(ctx);
    return n < 0;
}
