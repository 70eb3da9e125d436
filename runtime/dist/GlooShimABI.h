/* The C interface between the runtime and its Gloo shim
 * (runtime/dist/shim/GlooShim.cpp, docs/runtime/distributed.md).
 *
 * Gloo is a C++ library that Debian ships as a shared object only, and a
 * program must start on a machine without it (it needs nothing but glibc,
 * test/Driver/portable-executable.test). So the runtime never links Gloo:
 * the shim does, it is embedded in the runtime as bytes, and it is loaded
 * (dlopen of a memfd) only when CPU ranks are asked for; then libgloo.so.0
 * must be installed, as libnccl.so.2 must be for GPU ranks. Plain C, so
 * that the two sides share no C++ ABI. Every call returns 0 on success, or
 * -1 with a one-line message in `err` (NUL-terminated, at most err_size). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MODELC_GLOO_ABI_VERSION 1

/* The rendezvous store the runtime provides (in memory for ranks in one
 * process; over TCP across processes): Gloo's Store, as callbacks. */
typedef struct modelc_gloo_store {
  void *self;
  int (*set)(void *self, const char *key, const void *data, size_t size,
             char *err, size_t err_size);
  /* Waits up to timeout_ms for every key of `keys`. */
  int (*wait)(void *self, const char *const *keys, size_t count,
              int64_t timeout_ms, char *err, size_t err_size);
  /* Calls sink(sink_self, data, size) with the value of `key` (present:
   * wait came first). */
  int (*get)(void *self, const char *key,
             void (*sink)(void *sink_self, const void *data, size_t size),
             void *sink_self, char *err, size_t err_size);
} modelc_gloo_store;

typedef struct modelc_gloo_context modelc_gloo_context;

enum { MODELC_GLOO_F32 = 0, MODELC_GLOO_F64 = 1 };

typedef struct modelc_gloo_api {
  int abi_version;
  /* Rank `rank` of `size` joins through `store`: Gloo's TCP transport on
   * `hostname` (an address of this machine the others can reach), a full
   * mesh of connections; every later operation times out after
   * timeout_ms. */
  modelc_gloo_context *(*connect)(const modelc_gloo_store *store, int rank,
                                  int size, const char *hostname,
                                  int64_t timeout_ms, char *err,
                                  size_t err_size);
  /* In place: data = the sum over ranks of data (count elements). */
  int (*allreduce_sum)(modelc_gloo_context *context, void *data, size_t count,
                       int dtype, uint32_t tag, char *err, size_t err_size);
  /* In place: every rank gets root's `bytes` bytes. */
  int (*broadcast)(modelc_gloo_context *context, void *data, size_t bytes,
                   int root, uint32_t tag, char *err, size_t err_size);
  int (*barrier)(modelc_gloo_context *context, uint32_t tag, char *err,
                 size_t err_size);
  void (*destroy)(modelc_gloo_context *context);
} modelc_gloo_api;

/* The shim's one exported symbol. */
const modelc_gloo_api *modelc_gloo_get_api(void);

#ifdef __cplusplus
}
#endif
