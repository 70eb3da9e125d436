// The collectives a data-parallel rank needs (docs/runtime/distributed.md),
// whatever carries them: Gloo between CPU ranks (Gloo.h), NCCL between
// GPUs (to come). One Communicator per rank; its calls are collective:
// every rank of the group makes the same calls in the same order.
#pragma once

#include "runtime/support/Status.h"

#include <cstddef>
#include <cstdint>

namespace modelc::rt::dist {

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// In place: the sum over ranks, element by element.
  virtual Status allReduceSum(float *data, size_t count) = 0;
  virtual Status allReduceSum(double *data, size_t count) = 0;
  /// In place: every rank gets rank `root`'s bytes.
  virtual Status broadcast(void *data, size_t bytes, int root) = 0;
  virtual Status barrier() = 0;
};

} // namespace modelc::rt::dist
