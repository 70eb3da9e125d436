/* The C interface between the runtime and its rendezvous-store shim
 * (runtime/dist/shim/StoreShim.cpp, docs/runtime/distributed.md).
 *
 * A run of several processes meets through a key-value store that process
 * 0 serves over HTTP on the master's port (cpp-httplib, Debian's
 * libcpp-httplib-dev): Gloo's rendezvous keys, the NCCL unique id, each
 * process's heartbeat. cpp-httplib is a shared object in Debian, so the
 * shim alone links it and is loaded as runtime/dist/Shim.h says. Plain C:
 * the two sides share no C++ ABI.
 *
 * The requests: POST /set (header X-Key, the value as body), POST /wait
 * (header X-Wait-Ms, the keys as body, one per line), GET /get and GET /age
 * (header X-Key). Client calls connect anew each time, so they may be made
 * from any thread. They return MODELC_STORE_OK, MODELC_STORE_ABSENT (the
 * key is not there; a wait that timed out, with the missing keys in `err`
 * one per line), MODELC_STORE_NO_ANSWER (nothing answered at host:port) or
 * MODELC_STORE_FAILED, with a one-line message in `err`. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MODELC_STORE_ABI_VERSION 1

enum {
  MODELC_STORE_OK = 0,
  MODELC_STORE_ABSENT = 1,
  MODELC_STORE_NO_ANSWER = 2,
  MODELC_STORE_FAILED = 3
};

typedef struct modelc_store_server modelc_store_server;

typedef struct modelc_store_api {
  int abi_version;
  /* Serves an empty store on `port` of every address (IPv6 and IPv4; IPv4
   * alone where the machine has no IPv6, unless ipv6), with room for
   * `clients` requests at once (a wait holds one until its keys come). Null
   * and a message when the port is taken. Every answer carries the header
   * X-Modelc-Store: an answer without it came from another server. */
  modelc_store_server *(*serve)(int port, int ipv6, int clients, char *err,
                                size_t err_size);
  /* Ends the waits under way (they fail) and stops serving. */
  void (*stop)(modelc_store_server *server);

  int (*set)(const char *host, int port, const char *key, const void *data,
             size_t size, int64_t timeout_ms, char *err, size_t err_size);
  /* Waits up to wait_ms for every key of `keys`. */
  int (*wait)(const char *host, int port, const char *const *keys,
              size_t count, int64_t wait_ms, char *err, size_t err_size);
  /* Calls sink(sink_self, data, size) with the value of `key`. */
  int (*get)(const char *host, int port, const char *key,
             void (*sink)(void *sink_self, const void *data, size_t size),
             void *sink_self, int64_t timeout_ms, char *err, size_t err_size);
  /* *age_ms: the milliseconds since `key` was last set, by the server's
   * clock. */
  int (*age)(const char *host, int port, const char *key, int64_t *age_ms,
             int64_t timeout_ms, char *err, size_t err_size);
} modelc_store_api;

/* The shim's one exported symbol. */
const modelc_store_api *modelc_store_get_api(void);

#ifdef __cplusplus
}
#endif
